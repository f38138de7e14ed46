// loopback_ice40: loopback_top on an iCE40 HX8K as a self-test image (used for place and
// route): RX frames loop straight into the TX checker, so every beat the packetizer emits
// is checked on the chip; a few pins choose the rates and show the verdict.
module loopback_ice40 (
    input  wire       clk,
    input  wire       rst,
    input  wire       rx_stop,
    input  wire [3:0] rx_rate_sel,                // rx divider = rx_rate_sel + 1
    input  wire [3:0] tx_rate_sel,                // tx divider = tx_rate_sel + 1
    output wire       led_pattern_error,
    output wire       led_seq_error,
    output wire       led_underrun,
    output wire       led_overflow,
    output wire       led_malformed,
    output wire       led_stopped,
    output wire       led_heartbeat               // toggles every 2^20 beats consumed
);
    wire [63:0] tdata;
    wire        tlast, tvalid, tready;
    wire [31:0] frames_dropped, pattern_errors, seq_errors, underruns, malformed, late, ticks_lost;
    wire [63:0] missing;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] frames_ok;                        // only bit 0 and bit 20 reach a pin
    wire [63:0] consumed;
    /* verilator lint_on UNUSEDSIGNAL */
    wire        eob;

    /* verilator lint_off PINCONNECTEMPTY */
    loopback_top u_core (
        .clk(clk), .rst(rst), .rx_rate_div({12'd0, rx_rate_sel} + 16'd1), .tx_rate_div({12'd0, tx_rate_sel} + 16'd1),
        .rx_stop(rx_stop), .time_ns(64'd0),
        .rx_axis_tdata(tdata), .rx_axis_tkeep(), .rx_axis_tlast(tlast), .rx_axis_tvalid(tvalid),
        .rx_axis_tready(tready), .rx_stopped(led_stopped), .rx_frames_dropped(frames_dropped),
        .rx_ticks_lost(ticks_lost),
        .tx_axis_tdata(tdata), .tx_axis_tlast(tlast), .tx_axis_tvalid(tvalid), .tx_axis_tready(tready),
        .tx_frames_ok(frames_ok), .tx_malformed_frames(malformed), .tx_seq_errors(seq_errors),
        .tx_missing_frames(missing), .tx_late_frames(late), .tx_pattern_errors(pattern_errors),
        .tx_underruns(underruns), .tx_eob_seen(eob), .tx_consumed_beats(consumed));
    /* verilator lint_on PINCONNECTEMPTY */

    assign led_pattern_error = |pattern_errors;
    assign led_seq_error = (|seq_errors) | (|missing) | (|late);
    assign led_underrun = |underruns;
    assign led_overflow = (|frames_dropped) | (|ticks_lost);
    assign led_malformed = |malformed;
    assign led_heartbeat = consumed[20] ^ frames_ok[0] ^ eob;
endmodule
