// Test wrapper: four packetizer configurations in one build (one build per simulator).
// Ports are <instance>_<port>; the instances and what they cover are listed below.
module packetizer_tb (
    input wire clk,
    input wire rst,
    input wire [63:0] a_s_axis_tdata,
    input wire a_s_axis_tvalid,
    output wire a_s_axis_tready,
    input wire a_stop,
    input wire [63:0] a_time_ns,
    output wire [63:0] a_m_axis_tdata,
    output wire [7:0] a_m_axis_tkeep,
    output wire a_m_axis_tlast,
    output wire a_m_axis_tvalid,
    input wire a_m_axis_tready,
    output wire a_stopped,
    output wire [31:0] a_frames_dropped,
    input wire [63:0] b_s_axis_tdata,
    input wire b_s_axis_tvalid,
    output wire b_s_axis_tready,
    input wire b_stop,
    input wire [63:0] b_time_ns,
    output wire [63:0] b_m_axis_tdata,
    output wire [7:0] b_m_axis_tkeep,
    output wire b_m_axis_tlast,
    output wire b_m_axis_tvalid,
    input wire b_m_axis_tready,
    output wire b_stopped,
    output wire [31:0] b_frames_dropped,
    input wire [63:0] c_s_axis_tdata,
    input wire c_s_axis_tvalid,
    output wire c_s_axis_tready,
    input wire c_stop,
    input wire [63:0] c_time_ns,
    output wire [63:0] c_m_axis_tdata,
    output wire [7:0] c_m_axis_tkeep,
    output wire c_m_axis_tlast,
    output wire c_m_axis_tvalid,
    input wire c_m_axis_tready,
    output wire c_stopped,
    output wire [31:0] c_frames_dropped,
    input wire [63:0] d_s_axis_tdata,
    input wire d_s_axis_tvalid,
    output wire d_s_axis_tready,
    input wire d_stop,
    input wire [63:0] d_time_ns,
    output wire [63:0] d_m_axis_tdata,
    output wire [7:0] d_m_axis_tkeep,
    output wire d_m_axis_tlast,
    output wire d_m_axis_tvalid,
    input wire d_m_axis_tready,
    output wire d_stopped,
    output wire [31:0] d_frames_dropped
);
    // sc16, 1 channel, 8 samples: sc16_1ch_sob.bin; overflow stress
    packetizer #(.CHANNELS(1), .SAMPLE_FORMAT(1), .SAMPLES_PER_FRAME(8), .STREAM_ID(0), .CRC_ENABLE(0), .FIFO_ADDR_BITS(6)) u_a (
        .clk(clk), .rst(rst), .s_axis_tdata(a_s_axis_tdata), .s_axis_tvalid(a_s_axis_tvalid), .s_axis_tready(a_s_axis_tready), .stop(a_stop), .time_ns(a_time_ns), .m_axis_tdata(a_m_axis_tdata), .m_axis_tkeep(a_m_axis_tkeep), .m_axis_tlast(a_m_axis_tlast), .m_axis_tvalid(a_m_axis_tvalid), .m_axis_tready(a_m_axis_tready), .stopped(a_stopped), .frames_dropped(a_frames_dropped));

    // stream 7 with CRC-32C: sc16_1ch_seq5_crc.bin
    packetizer #(.CHANNELS(1), .SAMPLE_FORMAT(1), .SAMPLES_PER_FRAME(8), .STREAM_ID(7), .CRC_ENABLE(1), .FIFO_ADDR_BITS(6)) u_b (
        .clk(clk), .rst(rst), .s_axis_tdata(b_s_axis_tdata), .s_axis_tvalid(b_s_axis_tvalid), .s_axis_tready(b_s_axis_tready), .stop(b_stop), .time_ns(b_time_ns), .m_axis_tdata(b_m_axis_tdata), .m_axis_tkeep(b_m_axis_tkeep), .m_axis_tlast(b_m_axis_tlast), .m_axis_tvalid(b_m_axis_tvalid), .m_axis_tready(b_m_axis_tready), .stopped(b_stopped), .frames_dropped(b_frames_dropped));

    // 2 channels, a 2-frame FIFO: sc16_2ch_eob_overflow.bin
    packetizer #(.CHANNELS(2), .SAMPLE_FORMAT(1), .SAMPLES_PER_FRAME(8), .STREAM_ID(0), .CRC_ENABLE(0), .FIFO_ADDR_BITS(4)) u_c (
        .clk(clk), .rst(rst), .s_axis_tdata(c_s_axis_tdata), .s_axis_tvalid(c_s_axis_tvalid), .s_axis_tready(c_s_axis_tready), .stop(c_stop), .time_ns(c_time_ns), .m_axis_tdata(c_m_axis_tdata), .m_axis_tkeep(c_m_axis_tkeep), .m_axis_tlast(c_m_axis_tlast), .m_axis_tvalid(c_m_axis_tvalid), .m_axis_tready(c_m_axis_tready), .stopped(c_stopped), .frames_dropped(c_frames_dropped));

    // sc8, 16 samples: sc8_1ch.bin
    packetizer #(.CHANNELS(1), .SAMPLE_FORMAT(2), .SAMPLES_PER_FRAME(16), .STREAM_ID(0), .CRC_ENABLE(0), .FIFO_ADDR_BITS(6)) u_d (
        .clk(clk), .rst(rst), .s_axis_tdata(d_s_axis_tdata), .s_axis_tvalid(d_s_axis_tvalid), .s_axis_tready(d_s_axis_tready), .stop(d_stop), .time_ns(d_time_ns), .m_axis_tdata(d_m_axis_tdata), .m_axis_tkeep(d_m_axis_tkeep), .m_axis_tlast(d_m_axis_tlast), .m_axis_tvalid(d_m_axis_tvalid), .m_axis_tready(d_m_axis_tready), .stopped(d_stopped), .frames_dropped(d_frames_dropped));
endmodule
