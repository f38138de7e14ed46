// cic_stages: the N cascaded stages of a Hogenauer CIC filter, one W-bit register each,
// wrapping (two's complement): integrators (COMB = 0: y += x) or combs (COMB = 1:
// y = x - x', x' the stage's input M valid inputs earlier, 0 before). cic_decim and
// cic_interp are built from one chain of each.
// Stage k takes stage k-1's output (stage 0: in_data) when it is valid, so an input
// reaches out_data N clocks after it was taken; ce = 0 holds every stage and every
// delay (the filter's back-pressure). One input per clock.
module cic_stages #(
    parameter integer N = 3,
    parameter integer W = 16,
    parameter integer COMB = 0,
    parameter integer M = 1                       // combs' differential delay
) (
    input  wire         clk,
    input  wire         rst,
    input  wire         ce,
    input  wire [W-1:0] in_data,
    input  wire         in_valid,
    output wire [W-1:0] out_data,
    output wire         out_valid
);
    reg [W-1:0] stage [0:N-1];
    reg [N-1:0] stage_valid;

    genvar k;
    generate
        for (k = 0; k < N; k = k + 1) begin : g_stage
            wire         x_valid = (k == 0) ? in_valid : stage_valid[k-1];
            wire [W-1:0] x = (k == 0) ? in_data : stage[k-1];
            wire [W-1:0] y;                       // the stage's next value for input x
            if (COMB != 0) begin : g_comb
                reg [W-1:0] delay [0:M-1];        // the last M inputs, delay[M-1] the oldest
                integer j;
                assign y = x - delay[M-1];
                always @(posedge clk) begin
                    if (rst) begin
                        for (j = 0; j < M; j = j + 1) delay[j] <= {W{1'b0}};
                    end else if (ce && x_valid) begin
                        delay[0] <= x;
                        for (j = 1; j < M; j = j + 1) delay[j] <= delay[j - 1];
                    end
                end
            end else begin : g_integ
                assign y = stage[k] + x;
            end
            always @(posedge clk) begin
                if (rst) begin
                    stage[k] <= {W{1'b0}};
                    stage_valid[k] <= 1'b0;
                end else if (ce) begin
                    stage_valid[k] <= x_valid;
                    if (x_valid) stage[k] <= y;
                end
            end
        end
    endgenerate

    assign out_data = stage[N-1];
    assign out_valid = stage_valid[N-1];
endmodule
