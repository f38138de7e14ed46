// beat_fifo: synchronous first-word-fall-through FIFO of WIDTH-bit beats, 2^ADDR_BITS deep
// (memory read into a register, so yosys maps it to iCE40 block RAM). `used` counts the
// words in memory, not the one waiting in the output register: used < 2^ADDR_BITS means
// a write is accepted.
module beat_fifo #(
    parameter integer WIDTH = 64,
    parameter integer ADDR_BITS = 8
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire [WIDTH-1:0]     wr_data,
    input  wire                 wr_en,            // ignored when full (used[ADDR_BITS] set)
    output reg  [WIDTH-1:0]     rd_data,
    output reg                  rd_valid,
    input  wire                 rd_pop,           // takes rd_data when rd_valid
    output wire [ADDR_BITS:0]   used
);
    reg [WIDTH-1:0] mem [0:(1 << ADDR_BITS) - 1];
    reg [ADDR_BITS:0] wr_ptr;
    reg [ADDR_BITS:0] rd_ptr;

    assign used = wr_ptr - rd_ptr;
    wire full = used[ADDR_BITS];
    wire empty = (wr_ptr == rd_ptr);
    wire fetch = !empty && (!rd_valid || rd_pop);

    always @(posedge clk) begin
        if (wr_en && !full) mem[wr_ptr[ADDR_BITS-1:0]] <= wr_data;
        if (fetch) rd_data <= mem[rd_ptr[ADDR_BITS-1:0]];
    end

    always @(posedge clk) begin
        if (rst) begin
            wr_ptr <= {(ADDR_BITS + 1){1'b0}};
            rd_ptr <= {(ADDR_BITS + 1){1'b0}};
            rd_valid <= 1'b0;
        end else begin
            if (wr_en && !full) wr_ptr <= wr_ptr + 1'b1;
            if (fetch) begin
                rd_ptr <= rd_ptr + 1'b1;
                rd_valid <= 1'b1;
            end else if (rd_pop) begin
                rd_valid <= 1'b0;
            end
        end
    end
endmodule
