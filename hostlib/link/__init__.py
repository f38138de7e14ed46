"""The emulated network link between the device and the host (docs/long-link.md).

spec       the resolved link spec (a leaf: the DSL builds it)
netns      network namespaces: create, enter (setns), remove, and the janitor for
           what a killed run left behind
emulator   hilrig-link, the user-space emulator between two namespaces over TUN
netem      the kernel realisation (tc netem + tbf on a veth pair): detection and commands
session    one link for one case: namespaces, the chosen realisation, teardown on every path
report     what the link did, as case metrics
models     what a stream across the link should carry (paced UDP, window- and loss-limited
           TCP) and the lab's published figures: the study's rows beside its tables
"""
