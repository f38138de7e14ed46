"""The metric registry: every number a run reports, its unit and what it means.

One place defines the names. Results, thresholds, Robot metadata, the outbox and
InfluxDB all use these names; a counter is never reused for another meaning
(benchmark_rate's --drop-threshold compares sequence errors, not dropped
samples; here those are two metrics with two names).

Values are stored in the base unit named in the metric (seconds, samples per
second, bytes per second, plain counts). Thresholds may be written with any
unit of the same dimension (`2 ms`, `10 MSPS`) or without the unit suffix in
the name (`latency_p99` means `latency_p99_s`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    name: str
    # "count" | "time" | "rate" | "data_rate" | "ratio" | "percent" | "frequency" | "db" | "dbc" | "dbfs" | "ppm"
    dimension: str
    description: str
    aliases: tuple[str, ...] = ()
    # The same quantity in another dimension (freq_error_hz -> freq_error_ppm): a threshold
    # on this metric written in that dimension's unit judges that metric.
    relative: str | None = None


_METRICS = [
    Metric("samples_expected", "count",
           "samples the stream should have carried: RX, the rate over the span from first to last received "
           "frame; TX, the samples the host sent"),
    Metric("samples_received", "count", "samples received by the host (RX) or by the device (TX)"),
    Metric("samples_sent", "count", "samples sent by the device (RX) or by the host (TX)"),
    Metric("frames_received", "count", "frames received"),
    Metric("frames_sent", "count", "frames sent"),
    Metric("throughput_sps", "rate", "received samples per second over the measured window", ("throughput",)),
    Metric("throughput_msps", "count", "throughput in mega-samples per second (a plain number)"),
    Metric("throughput_Bps", "data_rate", "received payload bytes per second", ("throughput_bytes",)),
    Metric("throughput_ratio", "ratio", "throughput / requested rate (1.0 = all of it)"),
    Metric("frames_per_s", "rate", "received frames per second", ("frame_rate",)),
    Metric("sent_frames_per_s", "rate", "frames the sender sent per second over the measured window (its own "
           "count, host clock: the host for TX, the device for RX); what a link was offered"),
    Metric("overruns", "count", "overflow events (O): frames flagged OVERFLOW_BEFORE by the device"),
    Metric("underruns", "count", "underflow events (U): the device ran out of TX samples"),
    Metric("seq_errors", "count", "sequence error events (D/S): a jump in the frame sequence number"),
    Metric("missing_frames", "count", "frames never received (sequence gaps not filled later)"),
    Metric("dropped_samples", "count", "samples lost, from the sample tick of the frames around each gap"),
    Metric("duplicate_frames", "count", "frames received more than once"),
    Metric("reordered_frames", "count", "frames received after a later frame"),
    Metric("malformed_frames", "count", "frames with bad magic, version, size or CRC"),
    Metric("pattern_errors", "count", "samples whose value differs from the test pattern"),
    Metric("late_commands", "count", "timed commands that arrived too late at the device"),
    Metric("timeouts", "count", "receive calls that timed out with no data mid-stream"),
    Metric("latency_p50_s", "time", "median frame latency from the frame's send time", ("latency_p50",)),
    Metric("latency_p99_s", "time", "99th percentile frame latency", ("latency_p99",)),
    Metric("latency_p999_s", "time", "99.9th percentile frame latency", ("latency_p999",)),
    Metric("latency_max_s", "time", "largest frame latency", ("latency_max",)),
    Metric("pacing_period_p50_s", "time", "paced UDP send (transport.pacing): median achieved period, "
           "send start to send start, measured in the sender", ("pacing_period_p50",)),
    Metric("pacing_period_p99_s", "time", "paced UDP send: 99th percentile achieved period", ("pacing_period_p99",)),
    Metric("pacing_sent_late", "count", "paced UDP send (period or rate): datagrams sent at once because their "
           "slot had passed, the pacer catching up after a stall"),
    Metric("pacing_schedule_restarts", "count", "paced UDP send (period or rate): fresh schedules, the sender more "
           "than 50 ms behind"),
    Metric("longest_gap_s", "time",
           "longest time between two received frames, or from the last frame to the end of the window",
           ("longest_gap",)),
    Metric("time_to_first_sample_s", "time",
           "from stream start to the first received sample", ("time_to_first_sample",)),
    Metric("duration_s", "time", "measured streaming window"),
    Metric("host_cpu_percent", "percent", "host process CPU use during the window (100 = one core)", ("host_cpu",)),
    Metric("udp_rcvbuf_errors", "count", "kernel UDP receive-buffer errors during the window"),
    Metric("drop_ratio", "ratio", "dropped samples / (received + dropped samples): the share the link lost"),
    Metric("host_rx_cpu_percent", "percent",
           "CPU use of the host's receive thread during the window (100 = one core busy)"),
    Metric("host_cpu_busy_percent", "percent", "all CPUs of the host, busy share during the window (100 = saturated)"),
    Metric("host_limited", "count", "1 when samples were lost while the rig's own CPU was saturated "
           "(receive thread >= 90 % or all CPUs >= 95 %): the host, not the device, was the limit"),
    Metric("injected_drop_frames", "count",
           "frames the simulator dropped on purpose (fault injection): the truth beside missing_frames"),
    Metric("injected_corrupt_samples", "count",
           "samples the simulator corrupted on purpose: the truth beside pattern_errors"),
    Metric("injected_duplicate_frames", "count",
           "frames the simulator sent twice on purpose: the truth beside duplicate_frames"),
    Metric("injected_reorder_frames", "count",
           "frame pairs the simulator swapped on purpose: the truth beside reordered_frames"),
    # transport tcp: the connection's own figures (TCP_INFO), from its sending end (RX:
    # the device, TX: the host) at the end of the run; the buffers as each end got them.
    Metric("tcp_retransmits", "count", "tcp: segments the sender retransmitted (tcpi_total_retrans)"),
    Metric("tcp_rtt_s", "time", "tcp: the sender's smoothed round-trip time (tcpi_rtt)", ("tcp_rtt",)),
    Metric("tcp_rttvar_s", "time", "tcp: the mean deviation of that round-trip time (tcpi_rttvar)",
           ("tcp_rttvar",)),
    Metric("tcp_cwnd_segments", "count", "tcp: the sender's congestion window in segments (tcpi_snd_cwnd)"),
    Metric("tcp_sndbuf_bytes", "count", "tcp: the sender's SO_SNDBUF as granted (getsockopt: twice the usable size)"),
    Metric("tcp_rcvbuf_bytes", "count", "tcp: the receiver's SO_RCVBUF as granted (getsockopt: twice the usable size)"),
    Metric("socket_buffer_capped", "count",
           "1 when the kernel granted a smaller socket buffer than the rate needs (rmem_max)"),
    # A rate search (docs/dsl.md "Rate search"): its result, beside the confirmation run's metrics.
    Metric("max_rate_sps", "rate", "rate search: the highest candidate rate that held its thresholds, "
           "confirmed over the case duration (0: none held)", ("max_rate",)),
    Metric("max_throughput_Bps", "data_rate", "rate search: max_rate_sps as payload bytes per second, "
           "all directions together (rx+tx: both)", ("max_throughput_bytes_per_s", "max_throughput")),
    Metric("search_divider", "count", "rate search: the decimation/interpolation of max_rate_sps (0: none held)"),
    Metric("search_steps", "count", "rate search: runs made (steps and confirmations)"),
    # An emulated link (docs/long-link.md): configured beside delivered, for the direction the
    # case's frames cross (tx: down, host -> device; else up), over the measured window;
    # delays over the whole run.
    Metric("link_configured_rate_Bps", "data_rate", "link: the configured rate of the data direction "
           "(IP packet bytes per second; 0 = unlimited)"),
    Metric("link_configured_delay_s", "time", "link: the configured one-way delay of the data direction"),
    Metric("link_configured_loss", "ratio", "link: the configured loss probability of the data direction "
           "(Bernoulli and the Gilbert-Elliott chain's long-run rate together)"),
    Metric("link_packets_in", "count", "link: packets that entered the data direction"),
    Metric("link_packets_out", "count", "link: packets the data direction delivered (duplicates included)"),
    Metric("link_bytes_out", "count", "link: IP packet bytes the data direction delivered"),
    Metric("link_dropped_queue", "count", "link: packets dropped by the full drop-tail queue"),
    Metric("link_dropped_loss", "count", "link: packets dropped by the loss model (random and bursts)"),
    Metric("link_duplicated", "count", "link: packets the link sent twice"),
    Metric("link_reordered", "count", "link: packets delivered ahead of an earlier one"),
    Metric("link_loss_ratio", "ratio", "link: link_dropped_loss / link_packets_in (delivered loss)"),
    Metric("link_rate_Bps", "data_rate", "link: IP packet bytes per second the data direction delivered "
           "over the window", ("link_rate",)),
    Metric("link_delay_p50_s", "time", "link: median packet delay through the data direction, in to out "
           "(queueing included)", ("link_delay_p50",)),
    Metric("link_delay_p99_s", "time", "link: 99th percentile packet delay through the data direction",
           ("link_delay_p99",)),
    Metric("link_delay_max_s", "time", "link: largest packet delay through the data direction", ("link_delay_max",)),
    Metric("link_late_p99_s", "time", "link: 99th percentile of how late the emulator wrote a packet after "
           "its due time (its own timing error)", ("link_late_p99",)),
    Metric("link_read_wait_p99_s", "time", "link: 99th percentile bound on how long a packet waited in the "
           "emulator's input before it was read and time-stamped, over its coalesced reads", ("link_read_wait_p99",)),
    # An RF case (signal:, docs/rf.md "RF metrics"): the native tone analyzer on the capture
    # (the first signal.capture samples of the window), the strongest tone's figures.
    Metric("freq_error_hz", "frequency", "rf: measured frequency of the strongest tone less its nominal "
           "(signal:) frequency; a modulation: the carrier frequency offset found", ("freq_error",),
           relative="freq_error_ppm"),
    Metric("freq_error_ppm", "ppm", "rf: freq_error_hz relative to the nominal tone frequency, in ppm"),
    Metric("tone_power_dbfs", "dbfs", "rf: power of the strongest tone (0 dBFS: amplitude 1.0)", ("tone_power",)),
    Metric("snr_db", "db", "rf: tone / noise (harmonics, image, spurs and DC set aside)", ("snr",)),
    Metric("sinad_db", "db", "rf: tone / everything else but DC (noise, harmonics, spurs, image)", ("sinad",)),
    Metric("sfdr_dbc", "dbc", "rf: tone / the largest other component (image, harmonic or spur)", ("sfdr",)),
    Metric("thd_dbc", "dbc", "rf: harmonics 2-5 (at +-k*f) / tone", ("thd",)),
    Metric("iq_image_dbc", "dbc", "rf: the tone's image at -f / tone (IQ imbalance)", ("iq_image",)),
    Metric("dc_offset_dbfs", "dbfs", "rf: the DC component's power", ("dc_offset",)),
    # A modulated signal (signal: kind qpsk, 16qam, 64qam; docs/rf.md "Modulated signals"):
    # the payload's symbols after the matched filter, carrier and gain recovered.
    Metric("evm_rms_pct", "percent", "rf: RMS error vector of the payload symbols against the sent ones, "
           "% of the constellation's RMS", ("evm_rms",)),
    Metric("evm_peak_pct", "percent", "rf: largest error vector of a payload symbol, % of the constellation's RMS",
           ("evm_peak",)),
    Metric("evm_rms_db", "db", "rf: evm_rms in dB, 20 log10(EVM)"),
    Metric("mer_db", "db", "rf: modulation error ratio: symbol power / error power against the nearest "
           "(decided) points", ("mer",)),
    Metric("ber", "ratio", "rf: payload bit errors / payload bits (the seeded PN payload is known)"),
    Metric("bit_errors", "count", "rf: payload bits decided wrong"),
    Metric("symbols", "count", "rf: payload symbols measured"),
    Metric("timing_offset_samples", "count", "rf: the symbol timing found, as a delay in samples of the stream's "
           "symbol grid (a modulation; wrapped to +-half the frame's period)"),
    Metric("sco_ppm", "ppm", "rf: the sample-clock offset found from the symbol timing's drift (a modulation; > 0: "
           "the receiver's clock fast)"),
    Metric("freq_search_hz", "frequency", "rf: the modulation analyzer's carrier search reach: a carrier offset "
           "beyond +- it is misread (about symbol_rate / 7.75; a modulation)"),
    Metric("rf_capture_samples", "count", "rf: samples the analyzer took (consecutive, channel 0)"),
    Metric("rf_capture_restarts", "count", "rf: times the capture started again after a gap in the stream"),
    # The simulator's channel: what it injected, in the analyzer's terms (the channel's
    # analytic truth), beside each measured figure; absent where that impairment is off.
    Metric("injected_freq_error_hz", "frequency", "rf: the injected carrier frequency offset (the truth beside "
           "freq_error_hz)"),
    Metric("injected_tone_power_dbfs", "dbfs", "rf: the tone's power after gain, nonlinearity and IQ imbalance "
           "(the truth beside tone_power_dbfs)"),
    Metric("injected_snr_db", "db", "rf: the injected SNR (the truth beside snr_db)"),
    Metric("injected_evm_rms_pct", "percent", "rf: the EVM that the injected AWGN (symbol SNR = sps x the per-sample "
           "SNR) and IQ image give (the truth beside evm_rms_pct)"),
    Metric("injected_ber", "ratio", "rf: the AWGN bit error ratio of Gray-mapped QPSK/QAM at the injected EVM's "
           "symbol SNR (the truth beside ber)"),
    Metric("injected_sfdr_dbc", "dbc", "rf: tone / the largest injected component (image, cubic spur, "
           "another tone) (the truth beside sfdr_dbc)"),
    Metric("injected_thd_dbc", "dbc", "rf: the cubic's spur at -3f / tone (the truth beside thd_dbc)"),
    Metric("injected_iq_image_dbc", "dbc", "rf: the IQ imbalance's image / tone (the truth beside iq_image_dbc)"),
    Metric("injected_dc_offset_dbfs", "dbfs", "rf: the injected DC offset's power (the truth beside "
           "dc_offset_dbfs)"),
    Metric("injected_sco_ppm", "ppm", "rf: the injected sample-clock offset (the receiver's clock fast by it: a "
           "tone at f reads f / (1 + sco))"),
    Metric("injected_delay_samples", "count", "rf: the injected fractional delay, in samples"),
    Metric("injected_phase_noise_hz", "frequency", "rf: the injected phase noise's 3 dB linewidth (a Wiener "
           "phase, L(f) = linewidth / (2 pi f^2))"),
]

# Thresholds used by the engine to call a lossy run host-limited (docs/performance.md).
HOST_LIMITED_RX_THREAD_PERCENT = 90.0
HOST_LIMITED_ALL_CPUS_PERCENT = 95.0

METRICS: dict[str, Metric] = {m.name: m for m in _METRICS}
_ALIASES: dict[str, str] = {}
for _m in _METRICS:
    for _a in _m.aliases:
        assert _a not in METRICS and _a not in _ALIASES, f"metric alias {_a} defined twice"
        _ALIASES[_a] = _m.name


def lookup_metric(name: str) -> Metric | None:
    """The metric called `name` or by one of its aliases, or None."""
    canonical = _ALIASES.get(name, name)
    return METRICS.get(canonical)


def metric_names() -> list[str]:
    """Every accepted spelling, canonical names first (for error hints)."""
    return list(METRICS) + sorted(_ALIASES)
