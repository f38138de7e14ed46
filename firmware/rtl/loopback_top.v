// loopback_top: the device's streaming core. RX: pattern_gen at the decimated sample rate
// (one sample per channel every rx_rate_div clocks) -> packetizer -> rx_axis (frames to
// the host). TX: tx_axis (frames from the host) -> depacketizer_check, consuming one sample
// per channel every tx_rate_div clocks (the interpolated rate). rx_stop ends the RX burst
// (the frame completed while it is high carries EOB). time_ns is stamped into
// send_time_ns (tie to 0 when the device has no host-synchronised time).
module loopback_top #(
    parameter integer CHANNELS = 1,
    parameter integer SAMPLE_FORMAT = 1,          // 1 = sc16, 2 = sc8
    parameter integer SAMPLES_PER_FRAME = 248,    // sc16 1 ch: 992-byte payload, 1040-byte frames
    parameter integer STREAM_ID = 0,
    parameter integer CRC_ENABLE = 0,
    parameter integer RX_FIFO_ADDR_BITS = 9,
    parameter integer TX_FIFO_ADDR_BITS = 9
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] rx_rate_div,
    input  wire [15:0] tx_rate_div,
    input  wire        rx_stop,
    input  wire [63:0] time_ns,
    output wire [63:0] rx_axis_tdata,
    output wire [7:0]  rx_axis_tkeep,
    output wire        rx_axis_tlast,
    output wire        rx_axis_tvalid,
    input  wire        rx_axis_tready,
    output wire        rx_stopped,
    output wire [31:0] rx_frames_dropped,
    output wire [31:0] rx_ticks_lost,
    input  wire [63:0] tx_axis_tdata,
    input  wire        tx_axis_tlast,
    input  wire        tx_axis_tvalid,
    output wire        tx_axis_tready,
    output wire [31:0] tx_frames_ok,
    output wire [31:0] tx_malformed_frames,
    output wire [31:0] tx_seq_errors,
    output wire [63:0] tx_missing_frames,
    output wire [31:0] tx_late_frames,
    output wire [31:0] tx_pattern_errors,
    output wire [31:0] tx_underruns,
    output wire        tx_eob_seen,
    output wire [63:0] tx_consumed_beats
);
    wire rx_stb, tx_stb;
    wire [63:0] pat_tdata;
    wire pat_tvalid, pat_tready;

    rate_strobe u_rx_rate (.clk(clk), .rst(rst), .divider(rx_rate_div), .stb(rx_stb));
    rate_strobe u_tx_rate (.clk(clk), .rst(rst), .divider(tx_rate_div), .stb(tx_stb));

    pattern_gen #(.CHANNELS(CHANNELS), .SAMPLE_FORMAT(SAMPLE_FORMAT)) u_pattern (
        .clk(clk), .rst(rst), .tick_stb(rx_stb && !rx_stopped),
        .m_axis_tdata(pat_tdata), .m_axis_tvalid(pat_tvalid), .m_axis_tready(pat_tready),
        .ticks_lost(rx_ticks_lost));

    packetizer #(.CHANNELS(CHANNELS), .SAMPLE_FORMAT(SAMPLE_FORMAT), .SAMPLES_PER_FRAME(SAMPLES_PER_FRAME),
                 .STREAM_ID(STREAM_ID), .CRC_ENABLE(CRC_ENABLE), .FIFO_ADDR_BITS(RX_FIFO_ADDR_BITS)) u_packetizer (
        .clk(clk), .rst(rst), .s_axis_tdata(pat_tdata), .s_axis_tvalid(pat_tvalid), .s_axis_tready(pat_tready),
        .stop(rx_stop), .time_ns(time_ns), .m_axis_tdata(rx_axis_tdata), .m_axis_tkeep(rx_axis_tkeep),
        .m_axis_tlast(rx_axis_tlast), .m_axis_tvalid(rx_axis_tvalid), .m_axis_tready(rx_axis_tready),
        .stopped(rx_stopped), .frames_dropped(rx_frames_dropped));

    /* verilator lint_off PINCONNECTEMPTY */
    depacketizer_check #(.FIFO_ADDR_BITS(TX_FIFO_ADDR_BITS)) u_check (
        .clk(clk), .rst(rst), .cfg_channels(CHANNELS[7:0]), .cfg_sample_format(SAMPLE_FORMAT[7:0]),
        .s_axis_tdata(tx_axis_tdata), .s_axis_tlast(tx_axis_tlast), .s_axis_tvalid(tx_axis_tvalid),
        .s_axis_tready(tx_axis_tready), .consume_stb(tx_stb),
        .frames_ok(tx_frames_ok), .malformed_frames(tx_malformed_frames), .seq_errors(tx_seq_errors),
        .missing_frames(tx_missing_frames), .late_frames(tx_late_frames), .pattern_errors(tx_pattern_errors),
        .underruns(tx_underruns), .eob_seen(tx_eob_seen), .consumed_beats(tx_consumed_beats),
        .consume_data(), .consume_valid());
    /* verilator lint_on PINCONNECTEMPTY */
endmodule
