*** Settings ***
Documentation     hilrig YAML cases.
...
...               One Robot test per YAML case and sweep point under this directory. HilrigLibrary is also a listener: when this suite starts
...               it replaces the placeholder test below with the expanded cases.
...
...               Rig: --variable RIG:<name or path> (or $HILRIG_RIG), default rigs/sim.yaml.
...               Select: --variable CASE:<glob on test name>  --variable TAG:<glob on a tag>
...               (--test / --include filter before the cases exist; use these instead).
Library           hostlib.robot.HilrigLibrary


*** Test Cases ***
Hilrig Cases
    [Documentation]    Placeholder, replaced by one test per YAML case when the suite starts.
    [Tags]    hilrig:placeholder
    Fail    HilrigLibrary did not expand the YAML cases (is hostlib importable and the library a listener?)
