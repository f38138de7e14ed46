// rate_strobe: one-cycle strobe every `divider` clocks (0 and 1 both mean every clock):
// the sample rate master_clock / divider of a decimation or interpolation setting.
module rate_strobe (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] divider,
    output reg         stb
);
    reg [15:0] count;
    always @(posedge clk) begin
        if (rst) begin
            count <= 16'd0;
            stb <= 1'b0;
        end else if (count + 16'd1 >= divider) begin
            count <= 16'd0;
            stb <= 1'b1;
        end else begin
            count <= count + 16'd1;
            stb <= 1'b0;
        end
    end
endmodule
