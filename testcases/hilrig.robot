*** Settings ***
Documentation     hilrig YAML cases: one Robot test per case and sweep point under this directory.
...
...               Written by `python -m hostlib.robot.suite <dir>` from the YAML (a test checks it is current);
...               HilrigLibrary binds each test to its YAML case when the run starts, so Robot's
...               own --test, --include, --exclude and --rerunfailed select cases as in any suite.
...
...               Rig: --variable RIG:<name or path> (or $HILRIG_RIG), default rigs/sim.yaml.
...               Select also with --variable "CASE:<exact test name or a * glob>",
...               --variable "TAG:<tag expression>", --variable EXCLUDE:<tag expression>.
...               --variable REQUIRE_DEVICES:true fails a test whose listed device is not attached.
Library           hostlib.robot.HilrigLibrary


*** Test Cases ***
Hilrig Cases
    [Documentation]    Stands in for YAML cases added since this file was written (the listener adds them).
    [Tags]    hilrig:placeholder
    Fail    HilrigLibrary did not bind the YAML cases (is hostlib importable and the library a listener?)

RX b210 usb
    [Tags]    device:usrp    transport:usb    direction:rx    uhd    usb
    Run Hilrig Case

RX soapy [transport.kind=udp]
    [Tags]    device:soapy_sim    transport:udp    direction:rx    smoke    soapy
    Run Hilrig Case

RX soapy [transport.kind=shm]
    [Tags]    device:soapy_sim    transport:shm    direction:rx    smoke    soapy
    Run Hilrig Case

RX soapy [transport.kind=tcp]
    [Tags]    device:soapy_sim    transport:tcp    direction:rx    smoke    soapy
    Run Hilrig Case

RX uhd
    [Tags]    device:usrp    transport:udp    direction:rx    uhd
    Run Hilrig Case

RTL RX UDP 1 MS/s
    [Tags]    device:rtl    transport:udp    direction:rx    rtl
    Run Hilrig Case

RTL RX shm 1 MS/s
    [Tags]    device:rtl    transport:shm    direction:rx    rtl
    Run Hilrig Case

RTL TX UDP 1 MS/s
    [Tags]    device:rtl    transport:udp    direction:tx    rtl
    Run Hilrig Case

RTL loopback shm 1 MS/s
    [Tags]    device:rtl    transport:shm    direction:loopback    rtl
    Run Hilrig Case

RTL RX UDP injected faults
    [Tags]    device:rtl    transport:udp    direction:rx    rtl    faults
    Run Hilrig Case

RTL TX UDP injected faults
    [Tags]    device:rtl    transport:udp    direction:tx    rtl    faults
    Run Hilrig Case

RTL RX USB2 1 MS/s
    [Tags]    device:rtl    transport:usb    direction:rx    rtl    usb
    Run Hilrig Case

GR RX UDP 5 MS/s
    [Tags]    device:dut    transport:udp    direction:rx    gnuradio
    Run Hilrig Case

GR RX TCP 5 MS/s
    [Tags]    device:dut    transport:tcp    direction:rx    gnuradio    tcp
    Run Hilrig Case

GR RX shm 2 channels sc8
    [Tags]    device:dut    transport:shm    direction:rx    gnuradio
    Run Hilrig Case

GR RX shm injected faults
    [Tags]    device:dut    transport:shm    direction:rx    gnuradio    faults
    Run Hilrig Case

GR lab chain grc UDP fc32
    [Tags]    device:dut    transport:udp    direction:rx    gnuradio    lab_flowgraph
    Run Hilrig Case

GR lab chain py 2 channels soapy
    [Tags]    device:soapy_sim    transport:shm    direction:rx    gnuradio    lab_flowgraph    soapy
    Run Hilrig Case

GR lab chain grc injected faults
    [Tags]    device:dut    transport:shm    direction:rx    gnuradio    lab_flowgraph    faults
    Run Hilrig Case

GR soapy RX UDP 5 MS/s
    [Tags]    device:soapy_sim    transport:udp    direction:rx    gnuradio    soapy
    Run Hilrig Case

GR soapy RX shm 2 channels sc8
    [Tags]    device:soapy_sim    transport:shm    direction:rx    gnuradio    soapy
    Run Hilrig Case

GR soapy RX shm injected faults
    [Tags]    device:soapy_sim    transport:shm    direction:rx    gnuradio    soapy    faults
    Run Hilrig Case

GR USRP RX 1 MS/s
    [Tags]    device:usrp    transport:usb    direction:rx    gnuradio    uhd
    Run Hilrig Case

link LAN RX UDP 67 Mbit/s over 100 Mbit/s 10 ms
    [Tags]    device:dut    transport:udp    direction:rx    long-link    link
    Run Hilrig Case

link WAN RX UDP with random loss
    [Tags]    device:dut    transport:udp    direction:rx    long-link    link
    Run Hilrig Case

link LAN TX UDP 67 Mbit/s over 100 Mbit/s 10 ms
    [Tags]    device:dut    transport:udp    direction:tx    long-link    link
    Run Hilrig Case

Loopback UDP 10 MS/s
    [Tags]    device:dut    transport:udp    direction:loopback    smoke
    Run Hilrig Case

Loopback shm 10 MS/s
    [Tags]    device:dut    transport:shm    direction:loopback    smoke
    Run Hilrig Case

long link LAN UDP unpaced
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    lab:lan-udp-unpaced
    Run Hilrig Case

long link LAN UDP gap 1 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced    lab:lan-udp-gap-1us
    Run Hilrig Case

long link LAN UDP gap 2 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced    lab:lan-udp-gap-2us
    Run Hilrig Case

long link LAN UDP gap 3 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced    lab:lan-udp-gap-3us
    Run Hilrig Case

long link LAN UDP gap 4 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced    lab:lan-udp-gap-4us
    Run Hilrig Case

long link LAN UDP period [transport.pacing.period=8 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced
    Run Hilrig Case

long link LAN UDP period [transport.pacing.period=10 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced
    Run Hilrig Case

long link LAN UDP period [transport.pacing.period=11.66 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced
    Run Hilrig Case

long link LAN UDP period [transport.pacing.period=13 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced
    Run Hilrig Case

long link LAN UDP period [transport.pacing.period=16 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced
    Run Hilrig Case

long link LAN UDP period [transport.pacing.period=20 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    paced
    Run Hilrig Case

long link LAN TCP 512 KiB writes
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    lan    tcp    lab:lan-tcp
    Run Hilrig Case

long link LAN scaled UDP unpaced-equivalent period 57 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    scaled    paced    lab:lan-udp-unpaced
    Run Hilrig Case

long link LAN scaled UDP gap-1-equivalent period 100 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    scaled    paced    lab:lan-udp-gap-1us
    Run Hilrig Case

long link LAN scaled UDP gap-2-equivalent period 110 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    scaled    paced    lab:lan-udp-gap-2us
    Run Hilrig Case

long link LAN scaled UDP gap-3-equivalent period 120 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    scaled    paced    lab:lan-udp-gap-3us
    Run Hilrig Case

long link LAN scaled UDP gap-4-equivalent period 130 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    lan    scaled    paced    lab:lan-udp-gap-4us
    Run Hilrig Case

long link LAN scaled TCP 512 KiB writes
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    lan    scaled    tcp    lab:lan-tcp
    Run Hilrig Case

long link LAN scaled UDP unpaced short
    [Tags]    device:dut    transport:udp    direction:tx    long-link    link    lan    scaled
    Run Hilrig Case

long link same host UDP unpaced
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    paced    lab:same-host-udp-unpaced
    Run Hilrig Case

long link same host UDP gap 4 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    paced
    Run Hilrig Case

long link same host UDP gap 3 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    paced
    Run Hilrig Case

long link same host UDP gap 2 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    paced
    Run Hilrig Case

long link same host UDP gap 1 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    paced
    Run Hilrig Case

long link same host TCP 512 KiB writes
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    tcp    lab:same-host-tcp
    Run Hilrig Case

long link WAN UDP gap 4 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced    lab:wan-udp-gap-4us
    Run Hilrig Case

long link WAN UDP gap 161 us
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced    lab:wan-udp-gap-161us
    Run Hilrig Case

long link WAN UDP period [transport.pacing.period=11.66 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced
    Run Hilrig Case

long link WAN UDP period [transport.pacing.period=15.55 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced
    Run Hilrig Case

long link WAN UDP period [transport.pacing.period=21.21 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced
    Run Hilrig Case

long link WAN UDP period [transport.pacing.period=23.33 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced
    Run Hilrig Case

long link WAN UDP period [transport.pacing.period=24.56 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced
    Run Hilrig Case

long link WAN UDP period [transport.pacing.period=46.66 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    paced
    Run Hilrig Case

long link WAN TCP cubic default window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    tcp    lab:wan-tcp
    Run Hilrig Case

long link WAN TCP cubic BDP window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    tcp    lab:wan-tcp
    Run Hilrig Case

long link WAN TCP bbr default window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    tcp    lab:wan-tcp
    Run Hilrig Case

long link WAN TCP bbr BDP window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    tcp    lab:wan-tcp
    Run Hilrig Case

long link WAN scaled UDP 1.76x the rate (the lab's gap 4 us)
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced    lab:wan-udp-gap-4us
    Run Hilrig Case

long link WAN scaled UDP 0.106x the rate (the lab's gap 161 us)
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced    lab:wan-udp-gap-161us
    Run Hilrig Case

long link WAN scaled UDP period [transport.pacing.period=58.32 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced
    Run Hilrig Case

long link WAN scaled UDP period [transport.pacing.period=77.76 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced
    Run Hilrig Case

long link WAN scaled UDP period [transport.pacing.period=106.0 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced
    Run Hilrig Case

long link WAN scaled UDP period [transport.pacing.period=116.6 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced
    Run Hilrig Case

long link WAN scaled UDP period [transport.pacing.period=122.8 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced
    Run Hilrig Case

long link WAN scaled UDP period [transport.pacing.period=233.3 us]
    [Tags]    device:dut    transport:udp    direction:tx    study    long-link    link    wan    scaled    paced
    Run Hilrig Case

long link WAN scaled TCP cubic default window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    scaled    tcp    lab:wan-tcp
    Run Hilrig Case

long link WAN scaled TCP cubic BDP window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    scaled    tcp    lab:wan-tcp
    Run Hilrig Case

long link WAN scaled TCP bbr default window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    scaled    tcp    lab:wan-tcp
    Run Hilrig Case

long link WAN scaled TCP bbr BDP window
    [Tags]    device:dut    transport:tcp    direction:tx    study    long-link    link    wan    scaled    tcp    lab:wan-tcp
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=1, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=1, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=1, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=1, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=2, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=2, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=2, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=2, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=4, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=4, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=4, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=1392, channels=4, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=1, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=1, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=1, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=1, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=2, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=2, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=2, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=2, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=4, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=4, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=4, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=4000, channels=4, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=1, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=1, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=1, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=1, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=2, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=2, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=2, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=2, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=4, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=4, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=4, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=16000, channels=4, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=1, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=1, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=1, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=1, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=2, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=2, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=2, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=2, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=4, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=4, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=4, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=32000, channels=4, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=1, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=1, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=1, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=1, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=2, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=2, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=2, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=2, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=4, decimation=1000]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=4, decimation=100]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=4, decimation=10]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference [transport.frame_bytes=64992, channels=4, decimation=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=1392, channels=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=1392, channels=2]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=1392, channels=4]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=4000, channels=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=4000, channels=2]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=4000, channels=4]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=16000, channels=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=16000, channels=2]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=16000, channels=4]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=32000, channels=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=32000, channels=2]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=32000, channels=4]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=64992, channels=1]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=64992, channels=2]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

UDP reference unlimited [transport.frame_bytes=64992, channels=4]
    [Tags]    device:dut    transport:udp    direction:rx    reference    unlimited
    Run Hilrig Case

USB2 table RX 16 KiB x 2 MiB
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table
    Run Hilrig Case

USB2 table TX 16 KiB x 2 MiB
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table
    Run Hilrig Case

USB2 table rx+tx 16 KiB x 2 MiB
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table
    Run Hilrig Case

USB2 table RX 4 KiB x 32 KiB
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table
    Run Hilrig Case

USB2 table grid RX 4 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 4 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 4 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 4 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 4 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 4 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 4 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 8 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 8 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 8 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 8 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 8 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 8 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 8 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 16 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 16 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 16 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 16 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 16 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 16 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 16 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 32 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 32 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 32 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 32 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 32 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 32 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 32 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 64 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 64 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 64 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 64 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 64 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 64 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 128 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 128 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 128 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 128 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid RX 128 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 4 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 4 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 4 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 4 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 4 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 4 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 4 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 8 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 8 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 8 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 8 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 8 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 8 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 8 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 16 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 16 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 16 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 16 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 16 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 16 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 16 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 32 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 32 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 32 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 32 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 32 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 32 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 32 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 64 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 64 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 64 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 64 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 64 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 64 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 128 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 128 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 128 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 128 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid TX 128 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 4 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 4 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 4 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 4 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 4 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 4 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 4 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 8 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 8 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 8 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 8 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 8 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 8 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 8 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 16 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 16 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 16 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 16 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 16 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 16 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 16 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 32 KiB [transport.buffer_bytes=32 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 32 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 32 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 32 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 32 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 32 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 32 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 64 KiB [transport.buffer_bytes=64 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 64 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 64 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 64 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 64 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 64 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 128 KiB [transport.buffer_bytes=128 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 128 KiB [transport.buffer_bytes=256 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 128 KiB [transport.buffer_bytes=512 KiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 128 KiB [transport.buffer_bytes=1 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

USB2 table grid rx+tx 128 KiB [transport.buffer_bytes=2 MiB]
    [Tags]    device:dut    transport:usb    direction:rx+tx    reference    usb-table    grid
    Run Hilrig Case

RF multitone
    [Tags]    device:dut    transport:shm    direction:rx    rf
    Run Hilrig Case

RF 16QAM impaired
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF 16QAM SCO and delay
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF 64QAM impaired
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF QPSK EVM sweep [channel.snr=10 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF QPSK EVM sweep [channel.snr=15 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF QPSK EVM sweep [channel.snr=20 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF QPSK EVM sweep [channel.snr=25 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF QPSK EVM sweep [channel.snr=30 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF QPSK impaired
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF QPSK phase noise
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF SNR sweep [channel.snr=10 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF SNR sweep [channel.snr=20 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF SNR sweep [channel.snr=30 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF SNR sweep [channel.snr=40 dB]
    [Tags]    device:dut    transport:udp    direction:rx    rf    sweep
    Run Hilrig Case

RF tone clean
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF tone impaired
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF tone phase noise
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RF tone SCO and delay
    [Tags]    device:dut    transport:udp    direction:rx    rf
    Run Hilrig Case

RX shm [decimation=200]
    [Tags]    device:dut    transport:shm    direction:rx    smoke
    Run Hilrig Case

RX shm [decimation=20]
    [Tags]    device:dut    transport:shm    direction:rx    smoke
    Run Hilrig Case

RX shm [decimation=8]
    [Tags]    device:dut    transport:shm    direction:rx    smoke
    Run Hilrig Case

RX UDP 1 MS/s
    [Tags]    device:dut    transport:udp    direction:rx    smoke
    Run Hilrig Case

RX UDP 10 MS/s
    [Tags]    device:dut    transport:udp    direction:rx    smoke
    Run Hilrig Case

RX UDP 25 MS/s
    [Tags]    device:dut    transport:udp    direction:rx
    Run Hilrig Case

rx+tx UDP 10 MS/s
    [Tags]    device:dut    transport:udp    direction:rx+tx    smoke
    Run Hilrig Case

rx+tx shm 10 MS/s
    [Tags]    device:dut    transport:shm    direction:rx+tx    smoke
    Run Hilrig Case

RX UDP frame size [transport.frame_bytes=1400]
    [Tags]    device:dut    transport:udp    direction:rx    sweep
    Run Hilrig Case

RX UDP frame size [transport.frame_bytes=4000]
    [Tags]    device:dut    transport:udp    direction:rx    sweep
    Run Hilrig Case

RX UDP frame size [transport.frame_bytes=8000]
    [Tags]    device:dut    transport:udp    direction:rx    sweep
    Run Hilrig Case

TCP RX 10 MS/s
    [Tags]    device:dut    transport:tcp    direction:rx    smoke    tcp
    Run Hilrig Case

TCP TX 10 MS/s 512 KiB writes
    [Tags]    device:dut    transport:tcp    direction:tx    smoke    tcp
    Run Hilrig Case

TCP RX injected faults
    [Tags]    device:dut    transport:tcp    direction:rx    tcp    faults
    Run Hilrig Case

TCP TX injected faults
    [Tags]    device:dut    transport:tcp    direction:tx    tcp    faults
    Run Hilrig Case

TX UDP 10 MS/s
    [Tags]    device:dut    transport:udp    direction:tx    smoke
    Run Hilrig Case

TX UDP paced 50 us
    [Tags]    device:dut    transport:udp    direction:tx    paced
    Run Hilrig Case

USB2 RX 4 MS/s
    [Tags]    device:dut    transport:usb    direction:rx    usb
    Run Hilrig Case

USB3 RX 50 MS/s
    [Tags]    device:dut    transport:usb    direction:rx    usb
    Run Hilrig Case

USB2 TX 8 MS/s
    [Tags]    device:dut    transport:usb    direction:tx    usb
    Run Hilrig Case

USB2 RX injected faults
    [Tags]    device:dut    transport:usb    direction:rx    usb    faults
    Run Hilrig Case

USB2 RX device gone
    [Tags]    device:dut    transport:usb    direction:rx    usb    device-gone
    Run Hilrig Case

USB2 rx+tx 4 MS/s
    [Tags]    device:dut    transport:usb    direction:rx+tx    usb
    Run Hilrig Case

USB3 rx+tx 20 MS/s
    [Tags]    device:dut    transport:usb    direction:rx+tx    usb
    Run Hilrig Case

USB2 loopback 4 MS/s
    [Tags]    device:dut    transport:usb    direction:loopback    usb
    Run Hilrig Case
