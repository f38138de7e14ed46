// cic_interp: Hogenauer CIC interpolator, N stages, interpolation R, differential delay M,
// one real B_IN-bit two's-complement sample per beat (a complex stream uses one per I and Q).
//
// Registers are B_FULL = B_IN + ceil(N log2(R M)) bits and wrap; the result is exact.
// N combs (delay M) at the input rate, zero-stuffing by R (input j becomes output j*R,
// the R-1 outputs after it are zeros into the integrators), N integrators at the output
// rate: output i = sum_k h[k] u[i - k], h = N boxcars of R*M ones convolved, DC gain
// (RM)^N / R (hostlib/reference/cic.py is the integer model; vectors in docs/vectors/cic/).
// Output scaling: m_axis_tdata is the top OUT_WIDTH bits of the full-precision result
// (OUT_WIDTH = 0: all B_FULL bits). Exactly R outputs per input, one per clock while the
// consumer is ready. Latency: an input's first output is valid N + N + 1 clock cycles
// after the input was accepted (no stalls). Back-pressure stalls the integrators and,
// once the comb output is waiting, the combs; no sample is lost.
module cic_interp #(
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

    wire [B_FULL-1:0] x_ext = {{(B_FULL - B_IN){s_axis_tdata[B_IN-1]}}, s_axis_tdata};
    wire [B_FULL-1:0] comb_data, integ_data;
    wire              comb_valid;
    reg  [B_FULL-1:0] up_data;
    reg               up_valid;
    reg  [PHASE_BITS-1:0] phase;

    wire ce = !m_axis_tvalid || m_axis_tready;                       // integrators, upsampler
    wire take_comb = ce && (phase == {PHASE_BITS{1'b0}}) && comb_valid;
    wire ce_comb = !comb_valid || take_comb;                         // combs
    assign s_axis_tready = ce_comb;

    cic_stages #(.N(N), .W(B_FULL), .COMB(1), .M(M)) u_combs (.clk(clk), .rst(rst), .ce(ce_comb),
        .in_data(x_ext), .in_valid(s_axis_tvalid), .out_data(comb_data), .out_valid(comb_valid));
    cic_stages #(.N(N), .W(B_FULL), .COMB(0)) u_integrators (.clk(clk), .rst(rst), .ce(ce),
        .in_data(up_data), .in_valid(up_valid), .out_data(integ_data), .out_valid(m_axis_tvalid));

    // Zero-stuffing: phase 0 takes the comb output, phases 1 .. R-1 put zeros in.
    always @(posedge clk) begin
        if (rst) begin
            phase <= {PHASE_BITS{1'b0}};
            up_valid <= 1'b0;
            up_data <= {B_FULL{1'b0}};
        end else if (ce) begin
            up_valid <= 1'b0;
            if (phase != {PHASE_BITS{1'b0}} || comb_valid) begin
                up_data <= (phase != {PHASE_BITS{1'b0}}) ? {B_FULL{1'b0}} : comb_data;
                up_valid <= 1'b1;
                phase <= (phase == LAST_PHASE) ? {PHASE_BITS{1'b0}} : phase + 1'b1;
            end
        end
    end

    assign m_axis_tdata = integ_data[B_FULL-1 -: B_OUT];
endmodule
