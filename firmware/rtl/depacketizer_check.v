// depacketizer_check: the TX side. Takes hilrig frames (docs/frame-format.md v1, 64-bit
// AXI-Stream, tlast on each frame's last beat), checks header, seq and the `counter`
// pattern, and buffers the payload for a consumer that takes one sample per channel per
// consume_stb (the interpolated sample rate).
//
// A frame is malformed (counted in malformed_frames only) when magic, version,
// sample_format or channels differ from the configuration, payload_bytes is not a multiple
// of 8, or tlast does not come exactly after 6 + payload_bytes/8 beats. CRC-32C is not
// checked here (TX frames from the host carry none). For the other frames, at tlast:
// frames_ok +1; pattern_errors += words differing from the pattern for the frame's
// sample_tick; seq accounting as the host receiver does it: seq == expected in order,
// seq > expected one seq_error and missing_frames += seq - expected, seq < expected one
// late_frame (duplicate or reordered; no window here); expected = max(expected, seq + 1).
// Payload beats of frames whose header is good are buffered (back-pressure when the buffer
// is full). underruns counts events: the consumer needed a beat and the buffer was empty
// after the first payload beat and before an EOB frame arrived (one event per dry spell).
module depacketizer_check #(
    parameter integer FIFO_ADDR_BITS = 8
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [7:0]  cfg_channels,
    input  wire [7:0]  cfg_sample_format,         // 1 = sc16, 2 = sc8
    input  wire [63:0] s_axis_tdata,
    input  wire        s_axis_tlast,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        consume_stb,
    output reg  [31:0] frames_ok,
    output reg  [31:0] malformed_frames,
    output reg  [31:0] seq_errors,
    output reg  [63:0] missing_frames,
    output reg  [31:0] late_frames,
    output reg  [31:0] pattern_errors,
    output reg  [31:0] underruns,
    output reg         eob_seen,
    output reg  [63:0] consumed_beats,
    output wire [63:0] consume_data,              // the beat taken by the consumer ...
    output wire        consume_valid              // ... in this cycle (the DAC side)
);
    localparam [15:0] MAGIC = 16'h4852;

    reg  [15:0] beat;                             // index of the beat in the frame (saturates)
    reg         bad;                              // the frame is malformed so far
    reg         flag_eob;
    reg  [28:0] payload_beats;
    reg  [63:0] seq;
    reg  [31:0] tick_lo;
    reg  [31:0] exp_word;                         // pattern word expected at the next payload beat
    reg  [31:0] frame_errors;
    reg  [63:0] expected_seq;

    wire sc8 = (cfg_sample_format == 8'd2);
    wire take = s_axis_tvalid && s_axis_tready;
    wire in_header = (beat < 16'd6);
    wire [15:0] beat_next = (beat == 16'hFFFF) ? beat : beat + 16'd1;

    // Words of this beat that differ from the pattern.
    wire [2:0] miss16 = {2'b0, s_axis_tdata[31:0] != exp_word} + {2'b0, s_axis_tdata[63:32] != exp_word + 32'd1};
    wire [2:0] miss8 = {2'b0, s_axis_tdata[15:0] != exp_word[15:0]}
                     + {2'b0, s_axis_tdata[31:16] != exp_word[15:0] + 16'd1}
                     + {2'b0, s_axis_tdata[47:32] != exp_word[15:0] + 16'd2}
                     + {2'b0, s_axis_tdata[63:48] != exp_word[15:0] + 16'd3};
    wire [2:0] miss = sc8 ? miss8 : miss16;
    wire [31:0] words_per_beat = sc8 ? 32'd4 : 32'd2;

    // The frame's verdict at tlast (this beat included).
    wire beat0_bad = (s_axis_tdata[15:0] != MAGIC) || (s_axis_tdata[23:16] != 8'd1)
                   || (s_axis_tdata[55:48] != cfg_sample_format) || (s_axis_tdata[63:56] != cfg_channels);
    wire beat1_bad = (s_axis_tdata[2:0] != 3'd0);
    wire now_bad = bad || (beat == 16'd0 && beat0_bad) || (beat == 16'd1 && beat1_bad);
    wire length_ok = (beat >= 16'd5) && ({16'd0, beat} == {3'd0, payload_beats} + 32'd5);
    wire frame_good = !now_bad && length_ok;
    wire [31:0] errors_total = frame_errors + ((in_header || now_bad) ? 32'd0 : {29'd0, miss});

    // ---- payload buffer and consumer ----
    wire        fifo_full;
    wire [FIFO_ADDR_BITS:0] fifo_used;
    wire        fifo_valid;
    wire [63:0] fifo_data;
    wire        buffer_wr = take && !in_header && !now_bad;
    assign fifo_full = fifo_used[FIFO_ADDR_BITS];
    assign s_axis_tready = in_header || !fifo_full;

    reg  [15:0] demand;                           // words the consumer is owed
    reg         started;
    reg         dry;
    wire [15:0] wpb16 = sc8 ? 16'd4 : 16'd2;
    wire        want = (demand >= wpb16);
    wire        pop = want && fifo_valid;
    assign consume_data = fifo_data;
    assign consume_valid = pop;

    beat_fifo #(.WIDTH(64), .ADDR_BITS(FIFO_ADDR_BITS)) u_buffer (
        .clk(clk), .rst(rst), .wr_data(s_axis_tdata), .wr_en(buffer_wr),
        .rd_data(fifo_data), .rd_valid(fifo_valid), .rd_pop(pop), .used(fifo_used));

    always @(posedge clk) begin
        if (rst) begin
            beat <= 16'd0;
            bad <= 1'b0;
            flag_eob <= 1'b0;
            payload_beats <= 29'd0;
            seq <= 64'd0;
            tick_lo <= 32'd0;
            exp_word <= 32'd0;
            frame_errors <= 32'd0;
            expected_seq <= 64'd0;
            frames_ok <= 32'd0;
            malformed_frames <= 32'd0;
            seq_errors <= 32'd0;
            missing_frames <= 64'd0;
            late_frames <= 32'd0;
            pattern_errors <= 32'd0;
            eob_seen <= 1'b0;
        end else if (take) begin
            case (beat)
                16'd0: flag_eob <= s_axis_tdata[25];
                16'd1: payload_beats <= s_axis_tdata[31:3];
                16'd2: seq <= s_axis_tdata;
                16'd3: tick_lo <= s_axis_tdata[31:0];
                16'd4: exp_word <= tick_lo * {24'd0, cfg_channels};
                default: if (!in_header) exp_word <= exp_word + words_per_beat;
            endcase
            bad <= now_bad;
            frame_errors <= errors_total;
            beat <= beat_next;
            if (s_axis_tlast) begin
                beat <= 16'd0;
                bad <= 1'b0;
                frame_errors <= 32'd0;
                if (!frame_good) begin
                    malformed_frames <= malformed_frames + 32'd1;
                end else begin
                    frames_ok <= frames_ok + 32'd1;
                    pattern_errors <= pattern_errors + errors_total;
                    if (flag_eob) eob_seen <= 1'b1;
                    if (seq > expected_seq) begin
                        seq_errors <= seq_errors + 32'd1;
                        missing_frames <= missing_frames + (seq - expected_seq);
                    end else if (seq < expected_seq) begin
                        late_frames <= late_frames + 32'd1;
                    end
                    if (seq >= expected_seq) expected_seq <= seq + 64'd1;
                end
            end
        end
    end

    always @(posedge clk) begin
        if (rst) begin
            demand <= 16'd0;
            started <= 1'b0;
            dry <= 1'b0;
            underruns <= 32'd0;
            consumed_beats <= 64'd0;
        end else begin
            if (buffer_wr) started <= 1'b1;
            demand <= ((consume_stb && demand < 16'hFF00) ? demand + {8'd0, cfg_channels} : demand)
                      - (want ? wpb16 : 16'd0);
            if (pop) begin
                consumed_beats <= consumed_beats + 64'd1;
                dry <= 1'b0;
            end else if (want && started && !eob_seen) begin
                if (!dry) underruns <= underruns + 32'd1;
                dry <= 1'b1;
            end
        end
    end
endmodule
