"""`make bench`: the rig's transports measured beside their peers in one run.

hostlib.bench drives build/bin/hilrig-bench (the native half), iperf3, a
reference Python mmap transfer and the simulator, searches zero-loss rates and
prints one table (docs/performance.md explains every row).
"""
