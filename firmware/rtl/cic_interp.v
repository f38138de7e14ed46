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

    reg  [B_FULL-1:0] comb [0:N-1];
    reg  [N-1:0]      comb_valid;
    reg  [B_FULL-1:0] delay [0:N*M-1];            // comb k's delay line: delay[k*M .. k*M+M-1]
    reg  [B_FULL-1:0] up_data;
    reg               up_valid;
    reg  [PHASE_BITS-1:0] phase;
    reg  [B_FULL-1:0] integ [0:N-1];
    reg  [N-1:0]      integ_valid;

    wire ce = !m_axis_tvalid || m_axis_tready;                       // integrators, upsampler
    wire take_comb = ce && (phase == {PHASE_BITS{1'b0}}) && comb_valid[N-1];
    wire ce_comb = !comb_valid[N-1] || take_comb;                    // combs
    assign s_axis_tready = ce_comb;

    wire [B_FULL-1:0] x_ext = {{(B_FULL - B_IN){s_axis_tdata[B_IN-1]}}, s_axis_tdata};

    genvar k;
    generate
        for (k = 0; k < N; k = k + 1) begin : g_stage
            wire              c_in_valid = (k == 0) ? s_axis_tvalid : comb_valid[k-1];
            wire [B_FULL-1:0] c_in_data = (k == 0) ? x_ext : comb[k-1];
            wire              i_in_valid = (k == 0) ? up_valid : integ_valid[k-1];
            wire [B_FULL-1:0] i_in_data = (k == 0) ? up_data : integ[k-1];
            integer j;
            always @(posedge clk) begin
                if (rst) begin
                    comb[k] <= {B_FULL{1'b0}};
                    comb_valid[k] <= 1'b0;
                    for (j = 0; j < M; j = j + 1) delay[k*M + j] <= {B_FULL{1'b0}};
                end else if (ce_comb) begin
                    comb_valid[k] <= c_in_valid;
                    if (c_in_valid) begin
                        comb[k] <= c_in_data - delay[k*M + M - 1];
                        delay[k*M] <= c_in_data;
                        for (j = 1; j < M; j = j + 1) delay[k*M + j] <= delay[k*M + j - 1];
                    end
                end
            end
            always @(posedge clk) begin
                if (rst) begin
                    integ[k] <= {B_FULL{1'b0}};
                    integ_valid[k] <= 1'b0;
                end else if (ce) begin
                    integ_valid[k] <= i_in_valid;
                    if (i_in_valid) integ[k] <= integ[k] + i_in_data;
                end
            end
        end
    endgenerate

    always @(posedge clk) begin
        if (rst) begin
            phase <= {PHASE_BITS{1'b0}};
            up_valid <= 1'b0;
            up_data <= {B_FULL{1'b0}};
        end else if (ce) begin
            if (phase != {PHASE_BITS{1'b0}}) begin
                up_data <= {B_FULL{1'b0}};
                up_valid <= 1'b1;
                phase <= (phase == LAST_PHASE) ? {PHASE_BITS{1'b0}} : phase + 1'b1;
            end else if (comb_valid[N-1]) begin
                up_data <= comb[N-1];
                up_valid <= 1'b1;
                phase <= (phase == LAST_PHASE) ? {PHASE_BITS{1'b0}} : phase + 1'b1;
            end else begin
                up_valid <= 1'b0;
            end
        end
    end

    assign m_axis_tvalid = integ_valid[N-1];
    assign m_axis_tdata = integ[N-1][B_FULL-1 -: B_OUT];
endmodule
