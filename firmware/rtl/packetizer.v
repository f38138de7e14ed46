// packetizer: payload beats in, hilrig frames (docs/frame-format.md v1) out, 64-bit AXI-Stream.
//
// A frame is the 48-byte header (6 beats, little-endian: byte 0 in tdata[7:0]) followed by
// PAYLOAD_BEATS payload beats; tlast marks the frame's last beat, tkeep is all ones
// (payload_bytes is a multiple of 8 by construction, checked at elaboration).
// Input side: never back-pressures (s_axis_tready is 1 out of reset): a sample source
// cannot wait. Every SAMPLES_PER_FRAME samples form one frame; at the frame's first beat
// the whole frame is admitted only when the FIFO has room for all of it and a descriptor
// slot is free, else the whole frame is discarded: its seq and sample_tick are consumed
// and the next frame admitted carries OVERFLOW_BEFORE (exactly like the simulator's FIFO).
// seq = frame number (0, 1, ...), sample_tick = seq * SAMPLES_PER_FRAME, flags: TS_VALID
// always, SOB on seq 0, EOB on the frame completed while `stop` is high (the packetizer
// then admits nothing more), CRC_VALID with crc32c of the payload when CRC_ENABLE.
// send_time_ns = `time_ns` in the cycle header beat 4 is loaded into the output register
// (tie it to 0 when the device has no host-synchronised time: receivers then record no
// latency for the frame). reserved = 0.
module packetizer #(
    parameter integer CHANNELS = 1,
    parameter integer SAMPLE_FORMAT = 1,          // 1 = sc16 (4 bytes per sample), 2 = sc8 (2)
    parameter integer SAMPLES_PER_FRAME = 8,      // per channel
    parameter integer STREAM_ID = 0,
    parameter integer CRC_ENABLE = 0,
    parameter integer FIFO_ADDR_BITS = 8,         // payload FIFO: 2^FIFO_ADDR_BITS beats
    parameter integer DESC_ADDR_BITS = 2,         // up to 2^DESC_ADDR_BITS whole frames queued
    parameter integer COUNT_BITS = 64             // seq/tick counter width; < 64 only for formal checks
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [63:0] s_axis_tdata,
    input  wire        s_axis_tvalid,
    output reg         s_axis_tready,
    input  wire        stop,
    input  wire [63:0] time_ns,
    output reg  [63:0] m_axis_tdata,
    output wire [7:0]  m_axis_tkeep,
    output reg         m_axis_tlast,
    output reg         m_axis_tvalid,
    input  wire        m_axis_tready,
    output reg         stopped,                   // the EOB frame has been admitted
    output reg  [31:0] frames_dropped             // frames discarded for want of room
);
    localparam integer BYTES_PER_SAMPLE = (SAMPLE_FORMAT == 2) ? 2 : 4;
    localparam integer PAYLOAD_BYTES = SAMPLES_PER_FRAME * CHANNELS * BYTES_PER_SAMPLE;
    localparam integer PAYLOAD_BEATS = PAYLOAD_BYTES / 8;
    localparam integer BEAT_BITS = (PAYLOAD_BEATS > 1) ? $clog2(PAYLOAD_BEATS) : 1;
    localparam [7:0] FLAG_SOB = 8'h01, FLAG_EOB = 8'h02, FLAG_TS_VALID = 8'h04,
                     FLAG_OVERFLOW_BEFORE = 8'h08, FLAG_CRC_VALID = 8'h20;
    localparam integer DESC_BITS = 2 * COUNT_BITS + 8 + 32;
    /* verilator lint_off WIDTH */                // sized to the counters, whatever COUNT_BITS is
    localparam [COUNT_BITS-1:0] SPF_C = SAMPLES_PER_FRAME;
    /* verilator lint_on WIDTH */

    generate
        if (PAYLOAD_BYTES % 8 != 0 || PAYLOAD_BEATS < 1) begin : g_bad_frame
            PAYLOAD_BYTES_MUST_BE_A_NONZERO_MULTIPLE_OF_8 bad();
        end
        if (PAYLOAD_BEATS > (1 << FIFO_ADDR_BITS)) begin : g_bad_fifo
            FIFO_MUST_HOLD_A_WHOLE_FRAME bad();
        end
    endgenerate

    assign m_axis_tkeep = 8'hFF;

    function [31:0] crc32c_beat(input [31:0] crc, input [63:0] data);  // reflected, LSB first
        integer i;
        reg [31:0] c;
        begin
            c = crc;
            for (i = 0; i < 64; i = i + 1)
                c = (c[0] ^ data[i]) ? ((c >> 1) ^ 32'h82F63B78) : (c >> 1);
            crc32c_beat = c;
        end
    endfunction

    // ---- input side: admit or discard whole frames ----
    reg [BEAT_BITS-1:0] in_beat;
    reg                 in_admit;                 // the frame being received is admitted
    reg [COUNT_BITS-1:0] in_seq;
    reg [COUNT_BITS-1:0] in_tick;
    reg                 overflow_pending;
    reg [31:0]          crc_acc;

    wire [FIFO_ADDR_BITS:0] data_used;
    wire [DESC_ADDR_BITS:0] desc_used;
    wire in_take = s_axis_tvalid && s_axis_tready;
    wire in_first = (in_beat == {BEAT_BITS{1'b0}});
    wire in_last = (in_beat == PAYLOAD_BEATS[BEAT_BITS-1:0] - 1'b1);
    localparam [FIFO_ADDR_BITS+1:0] FRAME_BEATS_W = PAYLOAD_BEATS[FIFO_ADDR_BITS+1:0];
    localparam [FIFO_ADDR_BITS+1:0] FIFO_BEATS_W = 1 << FIFO_ADDR_BITS;
    wire room = ({1'b0, data_used} + FRAME_BEATS_W <= FIFO_BEATS_W)
                && !desc_used[DESC_ADDR_BITS];
    wire admit_now = in_first ? room : in_admit;
    wire data_wr = in_take && admit_now;
    wire [31:0] crc_next = (CRC_ENABLE != 0) ? crc32c_beat(in_first ? 32'hFFFFFFFF : crc_acc, s_axis_tdata) : 32'd0;
    wire desc_wr = data_wr && in_last;
    wire [7:0] desc_flags = FLAG_TS_VALID | ((in_seq == {COUNT_BITS{1'b0}}) ? FLAG_SOB : 8'h00)
                          | (overflow_pending ? FLAG_OVERFLOW_BEFORE : 8'h00)
                          | (stop ? FLAG_EOB : 8'h00) | ((CRC_ENABLE != 0) ? FLAG_CRC_VALID : 8'h00);
    wire [31:0] desc_crc = (CRC_ENABLE != 0) ? ~crc_next : 32'd0;

    always @(posedge clk) begin
        if (rst) begin
            s_axis_tready <= 1'b0;
            in_beat <= {BEAT_BITS{1'b0}};
            in_admit <= 1'b0;
            in_seq <= {COUNT_BITS{1'b0}};
            in_tick <= {COUNT_BITS{1'b0}};
            overflow_pending <= 1'b0;
            crc_acc <= 32'hFFFFFFFF;
            stopped <= 1'b0;
            frames_dropped <= 32'd0;
        end else begin
            s_axis_tready <= !(desc_wr && stop) && !stopped;
            if (in_take) begin
                in_admit <= admit_now;
                crc_acc <= crc_next;
                if (in_last) begin
                    in_beat <= {BEAT_BITS{1'b0}};
                    in_seq <= in_seq + 1'b1;
                    in_tick <= in_tick + SPF_C;
                    if (admit_now) begin
                        overflow_pending <= 1'b0;
                        if (stop) stopped <= 1'b1;
                    end else begin
                        overflow_pending <= 1'b1;
                        frames_dropped <= frames_dropped + 32'd1;
                    end
                end else begin
                    in_beat <= in_beat + 1'b1;
                end
            end
        end
    end

    // ---- FIFOs: payload beats, and one descriptor per admitted frame ----
    wire [63:0] data_rd;
    wire        data_valid;
    wire        data_pop;
    wire [DESC_BITS-1:0] desc_rd;
    wire        desc_valid;
    wire        desc_pop;

    beat_fifo #(.WIDTH(64), .ADDR_BITS(FIFO_ADDR_BITS)) u_data (
        .clk(clk), .rst(rst), .wr_data(s_axis_tdata), .wr_en(data_wr),
        .rd_data(data_rd), .rd_valid(data_valid), .rd_pop(data_pop), .used(data_used));

    beat_fifo #(.WIDTH(DESC_BITS), .ADDR_BITS(DESC_ADDR_BITS)) u_desc (
        .clk(clk), .rst(rst), .wr_data({desc_crc, desc_flags, in_tick, in_seq}), .wr_en(desc_wr),
        .rd_data(desc_rd), .rd_valid(desc_valid), .rd_pop(desc_pop), .used(desc_used));

    reg  [63:0] d_seq;
    reg  [63:0] d_tick;
    always @(*) begin                             // zero-extended to the 64-bit header fields
        d_seq = 64'd0;
        d_tick = 64'd0;
        d_seq[COUNT_BITS-1:0] = desc_rd[COUNT_BITS-1:0];
        d_tick[COUNT_BITS-1:0] = desc_rd[2*COUNT_BITS-1:COUNT_BITS];
    end
    wire [7:0]  d_flags = desc_rd[2*COUNT_BITS+7:2*COUNT_BITS];
    wire [31:0] d_crc = desc_rd[2*COUNT_BITS+39:2*COUNT_BITS+8];

    // ---- output side: 6 header beats, then the payload ----
    reg [2:0]           hdr_idx;
    reg                 out_payload;
    reg [BEAT_BITS-1:0] pay_idx;

    wire load = !m_axis_tvalid || m_axis_tready;
    wire hdr_go = load && !out_payload && desc_valid;
    assign data_pop = load && out_payload && data_valid;
    wire pay_last = (pay_idx == PAYLOAD_BEATS[BEAT_BITS-1:0] - 1'b1);
    assign desc_pop = data_pop && pay_last;

    reg [63:0] hdr_beat;
    always @(*) begin
        case (hdr_idx)
            3'd0: hdr_beat = {CHANNELS[7:0], SAMPLE_FORMAT[7:0], STREAM_ID[15:0], d_flags, 8'd1, 16'h4852};
            3'd1: hdr_beat = {d_crc, PAYLOAD_BYTES[31:0]};
            3'd2: hdr_beat = d_seq;
            3'd3: hdr_beat = d_tick;
            3'd4: hdr_beat = time_ns;
            default: hdr_beat = 64'd0;
        endcase
    end

    always @(posedge clk) begin
        if (rst) begin
            hdr_idx <= 3'd0;
            out_payload <= 1'b0;
            pay_idx <= {BEAT_BITS{1'b0}};
            m_axis_tvalid <= 1'b0;
            m_axis_tlast <= 1'b0;
            m_axis_tdata <= 64'd0;
        end else if (hdr_go) begin
            m_axis_tdata <= hdr_beat;
            m_axis_tvalid <= 1'b1;
            m_axis_tlast <= 1'b0;
            hdr_idx <= (hdr_idx == 3'd5) ? 3'd0 : hdr_idx + 3'd1;
            if (hdr_idx == 3'd5) out_payload <= 1'b1;
        end else if (data_pop) begin
            m_axis_tdata <= data_rd;
            m_axis_tvalid <= 1'b1;
            m_axis_tlast <= pay_last;
            pay_idx <= pay_last ? {BEAT_BITS{1'b0}} : pay_idx + 1'b1;
            if (pay_last) out_payload <= 1'b0;
        end else if (load) begin
            m_axis_tvalid <= 1'b0;
        end
    end
endmodule
