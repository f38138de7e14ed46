// pattern_gen: the `counter` test pattern of docs/frame-format.md as 64-bit AXI-Stream beats.
//
// Stream word k equals k mod 2^32 (sc16: u32, I low 16 bits, Q high 16) or k mod 2^16
// (sc8: u16, I low byte, Q high byte); word k = sample_tick * CHANNELS + channel, so the
// words are one running counter whatever CHANNELS is. Each tick_stb adds one sample per
// channel (CHANNELS words) of credit; a beat (2 sc16 or 4 sc8 words, little-endian: word
// k in the low bits) is offered once a whole beat of credit exists. Back-pressure holds the
// beat (AXI-Stream rules) and credit keeps growing up to CREDIT_MAX words; a tick that
// would pass it is refused and counted in ticks_lost (a real ADC cannot wait either).
module pattern_gen #(
    parameter integer CHANNELS = 1,
    parameter integer SAMPLE_FORMAT = 1,          // 1 = sc16, 2 = sc8
    parameter integer CREDIT_MAX = 1024           // words of credit held while stalled
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        tick_stb,                  // one sample per channel
    output reg  [63:0] m_axis_tdata,
    output reg         m_axis_tvalid,
    input  wire        m_axis_tready,
    output reg  [31:0] ticks_lost
);
    localparam integer WORDS_PER_BEAT = (SAMPLE_FORMAT == 2) ? 4 : 2;
    localparam integer CREDIT_BITS = $clog2(CREDIT_MAX + CHANNELS + 5);

    localparam [CREDIT_BITS-1:0] BEAT_CREDIT = WORDS_PER_BEAT[CREDIT_BITS-1:0];
    localparam [CREDIT_BITS-1:0] TICK_CREDIT = CHANNELS[CREDIT_BITS-1:0];
    localparam [CREDIT_BITS-1:0] MAX_CREDIT = CREDIT_MAX[CREDIT_BITS-1:0];

    reg [31:0] next_word;                         // word index of the next beat's word 0
    reg [CREDIT_BITS-1:0] credit;

    wire load = !m_axis_tvalid || m_axis_tready;
    wire emit = load && (credit >= BEAT_CREDIT);
    wire tick_ok = tick_stb && (credit + TICK_CREDIT <= MAX_CREDIT + (emit ? BEAT_CREDIT : {CREDIT_BITS{1'b0}}));

    wire [63:0] beat = (SAMPLE_FORMAT == 2)
        ? {next_word[15:0] + 16'd3, next_word[15:0] + 16'd2, next_word[15:0] + 16'd1, next_word[15:0]}
        : {next_word + 32'd1, next_word};

    always @(posedge clk) begin
        if (rst) begin
            next_word <= 32'd0;
            credit <= {CREDIT_BITS{1'b0}};
            m_axis_tvalid <= 1'b0;
            m_axis_tdata <= 64'd0;
            ticks_lost <= 32'd0;
        end else begin
            credit <= credit + (tick_ok ? TICK_CREDIT : {CREDIT_BITS{1'b0}})
                              - (emit ? BEAT_CREDIT : {CREDIT_BITS{1'b0}});
            if (tick_stb && !tick_ok) ticks_lost <= ticks_lost + 32'd1;
            if (emit) begin
                m_axis_tdata <= beat;
                m_axis_tvalid <= 1'b1;
                next_word <= next_word + WORDS_PER_BEAT[31:0];
            end else if (load) begin
                m_axis_tvalid <= 1'b0;
            end
        end
    end
endmodule
