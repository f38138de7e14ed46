// cic_decim: Hogenauer CIC decimator, N stages, decimation R, differential delay M, one
// real B_IN-bit two's-complement sample per beat (a complex stream uses one per I and Q).
//
// Registers are B_FULL = B_IN + ceil(N log2(R M)) bits and wrap; the result is exact.
// Integrators run at the input rate, every R-th integrator output (after inputs R-1,
// 2R-1, ...) goes to N combs (delay M) at the output rate: output j = sum_k h[k]
// x[jR + R-1 - k], h = N boxcars of R*M ones convolved, DC gain (RM)^N
// (hostlib/reference/cic.py is the integer model; vectors in docs/vectors/cic/).
// Output scaling: m_axis_tdata is the top OUT_WIDTH bits of the full-precision result
// (OUT_WIDTH = 0: all B_FULL bits), i.e. an arithmetic shift right by B_FULL - OUT_WIDTH.
// Throughput: one input per clock. Latency: the output for an input group is valid
// 2N + 1 clock cycles after the group's last input was accepted (no stalls).
// Back-pressure stalls the whole pipeline (one clock enable), so no sample is lost.
module cic_decim #(
    parameter integer N = 3,
    parameter integer R = 8,
    parameter integer M = 1,
    parameter integer B_IN = 16,
    parameter integer OUT_WIDTH = 0,
    // derived; not to be overridden
    parameter integer B_FULL = B_IN + cic_growth(N, R * M),
    parameter integer B_OUT = (OUT_WIDTH > 0) ? OUT_WIDTH : B_FULL
) (
    input  wire              clk,
    input  wire              rst,
    input  wire [B_IN-1:0]   s_axis_tdata,
    input  wire              s_axis_tvalid,
    output wire              s_axis_tready,
    output wire [B_OUT-1:0]  m_axis_tdata,
    output wire              m_axis_tvalid,
    input  wire              m_axis_tready
);
    `include "cic_growth.vh"                       // B_FULL's ceil(N log2(R M)), shared

    localparam integer PHASE_BITS = (R > 1) ? $clog2(R) : 1;
    localparam integer LAST_PHASE_INT = R - 1;
    localparam [PHASE_BITS-1:0] LAST_PHASE = LAST_PHASE_INT[PHASE_BITS-1:0];

    wire ce = !m_axis_tvalid || m_axis_tready;
    assign s_axis_tready = ce;

    wire [B_FULL-1:0] x_ext = {{(B_FULL - B_IN){s_axis_tdata[B_IN-1]}}, s_axis_tdata};
    wire [B_FULL-1:0] integ_data, comb_data;
    wire              integ_valid;
    reg  [B_FULL-1:0] dec_data;
    reg               dec_valid;
    reg  [PHASE_BITS-1:0] phase;

    cic_stages #(.N(N), .W(B_FULL), .COMB(0)) u_integrators (.clk(clk), .rst(rst), .ce(ce),
        .in_data(x_ext), .in_valid(s_axis_tvalid), .out_data(integ_data), .out_valid(integ_valid));
    cic_stages #(.N(N), .W(B_FULL), .COMB(1), .M(M)) u_combs (.clk(clk), .rst(rst), .ce(ce),
        .in_data(dec_data), .in_valid(dec_valid), .out_data(comb_data), .out_valid(m_axis_tvalid));

    // Every R-th integrator output goes on to the combs.
    always @(posedge clk) begin
        if (rst) begin
            phase <= {PHASE_BITS{1'b0}};
            dec_valid <= 1'b0;
            dec_data <= {B_FULL{1'b0}};
        end else if (ce) begin
            dec_valid <= 1'b0;
            if (integ_valid) begin
                phase <= (phase == LAST_PHASE) ? {PHASE_BITS{1'b0}} : phase + 1'b1;
                if (phase == LAST_PHASE) begin
                    dec_valid <= 1'b1;
                    dec_data <= integ_data;
                end
            end
        end
    end

    assign m_axis_tdata = comb_data[B_FULL-1 -: B_OUT];
endmodule
