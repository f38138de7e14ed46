// Bounded model check of the packetizer (yosys read_verilog -formal, yosys-smtbmc, z3):
// firmware/formal/run_bmc.py. Small configuration: sc16, 1 channel, 4 samples per frame
// (2 payload beats) and a 2-beat FIFO (one frame), so that overflow, and a frame flagged
// OVERFLOW_BEFORE after it, are reached within the depth. Input beat i carries the value i, so a payload beat names
// where it came from; seq/tick counters are 8 bits (COUNT_BITS) to keep the solver fast, the
// logic is the same at 64. Free inputs: input valid, output ready and stop (time_ns is
// a plain register path, tied to 0 here).
// Proven for every input sequence up to the depth:
//   - no beat lost or duplicated: payload beat j of the frame with seq s is input beat
//     s * 2 + j, and tlast comes exactly on the frame's last beat (6 header + 2 payload);
//   - header: magic, version, stream_id, format, channels fixed, payload_bytes = 16,
//     sample_tick = seq * 4, reserved = 0, SOB exactly on seq 0;
//   - seq: +1 per frame emitted, a gap only on a frame flagged OVERFLOW_BEFORE, and the
//     gap equals the frames counted in frames_dropped;
//   - AXI-Stream: once valid, data and last hold until ready.
module packetizer_props (
    input wire        clk,
    input wire        in_valid,
    input wire        out_ready,
    input wire        stop
);
    localparam integer PB = 2;                    // payload beats per frame
    localparam integer LAST = 6 + PB - 1;

    reg rst = 1'b1;
    always @(posedge clk) rst <= 1'b0;

    reg  [7:0]  in_count = 8'd0;
    wire        s_ready;
    wire [63:0] m_data;
    wire [7:0]  m_keep;
    wire        m_last, m_valid, stopped;
    wire [31:0] frames_dropped;

    packetizer #(.CHANNELS(1), .SAMPLE_FORMAT(1), .SAMPLES_PER_FRAME(4), .STREAM_ID(5), .CRC_ENABLE(0),
                 .FIFO_ADDR_BITS(1), .DESC_ADDR_BITS(1), .COUNT_BITS(8)) dut (
        .clk(clk), .rst(rst), .s_axis_tdata({56'd0, in_count}), .s_axis_tvalid(in_valid), .s_axis_tready(s_ready),
        .stop(stop), .time_ns(64'd0), .m_axis_tdata(m_data), .m_axis_tkeep(m_keep), .m_axis_tlast(m_last),
        .m_axis_tvalid(m_valid), .m_axis_tready(out_ready), .stopped(stopped), .frames_dropped(frames_dropped));

    always @(posedge clk) if (!rst && in_valid && s_ready) in_count <= in_count + 8'd1;

    // ---- the output stream, beat by beat ----
    reg  [3:0]  out_beat = 4'd0;
    reg  [7:0]  flags = 8'd0;
    reg  [7:0]  seq = 8'd0;
    reg  [7:0]  next_seq = 8'd0;                  // seq the next frame has without a gap
    reg  [7:0]  gaps = 8'd0;                      // frames skipped in the emitted seq
    reg         past_stall = 1'b0;
    reg  [63:0] past_data = 64'd0;
    reg         past_last = 1'b0;
    wire        fire = m_valid && out_ready;

    always @(posedge clk) begin
        past_stall <= !rst && m_valid && !out_ready;
        past_data <= m_data;
        past_last <= m_last;
        if (!rst && fire) begin
            out_beat <= (out_beat == LAST) ? 4'd0 : out_beat + 4'd1;
            if (out_beat == 4'd0) flags <= m_data[31:24];
            if (out_beat == 4'd2) begin
                seq <= m_data[7:0];
                next_seq <= m_data[7:0] + 8'd1;
                gaps <= gaps + (m_data[7:0] - next_seq);
            end
        end
    end

    always @(*) begin
        if (!rst) begin
            assert(m_keep == 8'hFF);
            if (past_stall) begin
                assert(m_valid);
                assert(m_data == past_data);
                assert(m_last == past_last);
            end
            if (fire) begin
                assert(m_last == (out_beat == LAST));
                case (out_beat)
                    4'd0: begin
                        assert(m_data[23:0] == 24'h014852);
                        assert(m_data[63:32] == 32'h01_01_0005);        // channels 1, sc16, stream 5
                        assert(m_data[26]);                             // TS_VALID
                    end
                    4'd1: assert(m_data == 64'd16);                     // payload_bytes 16, crc 0
                    4'd2: begin
                        assert(m_data[63:8] == 56'd0 && m_data[7:0] >= next_seq);
                        assert(flags[3] == (m_data[7:0] != next_seq));   // OVERFLOW_BEFORE <=> a gap
                        assert(flags[0] == (m_data == 64'd0));           // SOB <=> seq 0
                    end
                    4'd3: assert(m_data == {54'd0, seq, 2'b00});        // sample_tick = seq * 4
                    4'd4: ;                                             // send_time_ns: time_ns
                    4'd5: assert(m_data == 64'd0);
                    default: assert(m_data == {55'd0, seq, 1'b0} + {60'd0, out_beat} - 64'd6);  // input beat seq*2 + j
                endcase
            end
            // every seq skipped was a frame dropped (the dropped count may run ahead of frames
            // not yet emitted, never behind)
            assert({24'd0, gaps} <= frames_dropped);
            assert({1'b0, in_count} >= {next_seq, 1'b0});
        end
    end

    // non-vacuity: the seq beat of a frame flagged OVERFLOW_BEFORE is emitted (smtbmc -c)
    always @(*) if (!rst) cover(fire && out_beat == 4'd2 && flags[3]);
endmodule
