*** Settings ***
Documentation     hilrig YAML cases.
...
...               One Robot test per YAML case and sweep point under this directory. HilrigLibrary is also a listener: when this suite starts
...               it replaces the placeholder test below with the expanded cases.
...
...               Rig: --variable RIG:<name or path> (or $HILRIG_RIG), default rigs/sim.yaml.
...               Select: --variable "CASE:<exact test name, brackets and all, or a * glob>"
...               --variable "TAG:<tag expression: AND/OR/NOT, globs>"  --variable EXCLUDE:<tag expression>;
...               Robot's own --exclude works too. For Robot's --test/--include run the YAML parser instead:
...               robot --parser hostlib.robot.YamlParser testcases/
...               --variable REQUIRE_DEVICES:true fails a test whose listed device is not attached.
Library           hostlib.robot.HilrigLibrary


*** Test Cases ***
Hilrig Cases
    [Documentation]    Placeholder, replaced by one test per YAML case when the suite starts.
    [Tags]    hilrig:placeholder
    Fail    HilrigLibrary did not expand the YAML cases (is hostlib importable and the library a listener?)
