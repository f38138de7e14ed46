// Included inside cic_decim and cic_interp (the bit growth of their registers).
    // ceil(n * log2(rm)): the smallest g with 2^g >= rm^n
    function integer cic_growth(input integer n, input integer rm);
        reg [127:0] p;
        integer i;
        begin
            p = 128'd1;
            for (i = 0; i < n; i = i + 1) p = p * rm;
            cic_growth = 0;
            while ((128'd1 << cic_growth) < p) cic_growth = cic_growth + 1;
        end
    endfunction
