"""A lab's receive chain in Python, as a `host: gnuradio` case names it
(`flowgraph: .../lab_chain.py`, docs/gnuradio.md): a gr.hier_block2 with one input
and one output per channel, made without arguments. hilrig connects the device's
source to its inputs and pattern_check to its outputs.

Every sample must come out unchanged and in order for the check to pass: each
channel here goes through a multiply by 1.0 and a FIR with the single tap 1.0
(complex float: exact), like a chain whose gain and filter are still neutral.
"""
from gnuradio import blocks, filter, gr


class lab_chain_2ch(gr.hier_block2):
    def __init__(self, channels=2):
        gr.hier_block2.__init__(self, "lab chain (2 channels)",
                                gr.io_signature(channels, channels, gr.sizeof_gr_complex),
                                gr.io_signature(channels, channels, gr.sizeof_gr_complex))
        self.stages = []
        for ch in range(channels):
            gain = blocks.multiply_const_cc(1.0)
            fir = filter.fir_filter_ccf(1, [1.0])
            self.connect((self, ch), gain, fir, (self, ch))
            self.stages += [gain, fir]
