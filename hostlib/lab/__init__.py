"""Many rigs, one lab (docs/scale-out.md): rigs as labgrid places.

    place.py        what a place offers (its devices' capabilities) and what a run asks
    coordinator.py  hilrig's one labgrid client (typed views of places and reservations)
    exporter.py     the hilrig exporter: labgrid's exporter with truthful device availability
    reserve.py      reserve, lease, acquire with a deadline that names the holder; release
    lease.py        the heartbeat lease a holder keeps on its place
    janitor.py      frees the places whose holder's heartbeat is older than its lease
    status.py       `hilrig lab status` and the `hilrig_place` measurement
    nightly.py      the suite once per place in parallel (pabot)

The run session (hostlib.session) holds a place for a run; the CLI, Robot library and
pytest plugin pass the request on.
"""
