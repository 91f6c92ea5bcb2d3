#!/usr/bin/env bash
# Checks the device-tree binding docs/kmd/nvidia,nvdla.yaml with Debian's dt-schema the way the
# kernel's dt_binding_check does: the binding against the meta-schemas, then its examples
# compiled with dtc and validated against it. Then proves the validation is not vacuous: nodes
# that break the binding must be refused.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
binding=$root/docs/kmd/nvidia,nvdla.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in dt-doc-validate dt-mk-schema dt-extract-example dt-validate dtc; do
	command -v "$tool" >/dev/null ||
		{ echo "dt-check: $tool is missing (make deps installs dt-schema and device-tree-compiler)"; exit 1; }
done

# The binding's $id names it npu/nvidia,nvdla.yaml below the schema root.
mkdir -p "$work/schemas/npu"
cp "$binding" "$work/schemas/npu/"
schema=$work/schemas/npu/nvidia,nvdla.yaml
(cd "$work" && dt-doc-validate -u schemas schemas/npu/nvidia,nvdla.yaml)
dt-mk-schema -j -o "$work/processed.json" "$work/schemas"

# Compiles a DTS (the example template's /plugin/ leaves phandles to clocks and resets
# unresolved); any dtc warning fails the check.
compile() {
	local dts=$1 dtb=$2 log
	log=$(dtc -@ -I dts -O dtb -o "$dtb" -Wno-avoid_unnecessary_addr_size "$dts" 2>&1) || {
		echo "$log"
		return 1
	}
	if [ -n "$log" ]; then
		echo "$log"
		return 1
	fi
}

dt-extract-example "$schema" >"$work/example.dts"
compile "$work/example.dts" "$work/example.dtb" ||
	{ echo "dt-check: the binding's example does not compile cleanly"; exit 1; }
matched=$(dt-validate -M -s "$work/processed.json" "$work/example.dtb" 2>&1)
echo "$matched" | grep -q 'schemas/npu/nvidia,nvdla.yaml#' ||
	{ echo "$matched"; echo "dt-check: no node of the example matched the binding"; exit 1; }
out=$(dt-validate -s "$work/processed.json" "$work/example.dtb" 2>&1)
if [ -n "$out" ]; then
	echo "$out"
	echo "dt-check: the binding's example does not validate"
	exit 1
fi
echo "dt-check: binding and example valid"

# A minimal node must pass and each broken one draw an error from dt-validate (nodes whose
# compatible the binding does not name are not its business, so every case names one). The
# root is the interrupt controller, with GIC-style three-cell specifiers, as in the template
# of dt-extract-example.
refused=0
write_node() {
	local body=$1
	cat >"$work/bad.dts" <<-EOF
		/dts-v1/;
		/plugin/;
		/ {
		    compatible = "foo";
		    model = "foo";
		    #address-cells = <1>;
		    #size-cells = <1>;
		    interrupt-controller;
		    #interrupt-cells = <3>;
		    accelerator@a0000000 {
		        $body
		    };
		};
	EOF
}
check_refused() {
	local what=$1
	write_node "$2"
	compile "$work/bad.dts" "$work/bad.dtb" || { echo "dt-check: case '$what' does not compile"; exit 1; }
	if [ -z "$(dt-validate -s "$work/processed.json" "$work/bad.dtb" 2>&1)" ]; then
		echo "dt-check: FAIL: a node with $what was accepted"
		exit 1
	fi
	refused=$((refused + 1))
}
good='compatible = "nvidia,nvdla-nv-full"; reg = <0xa0000000 0x20000>; interrupts = <0 93 4>; resets = <&rst>;'
write_node "$good"
compile "$work/bad.dts" "$work/bad.dtb" || { echo "dt-check: the minimal node does not compile"; exit 1; }
out=$(dt-validate -s "$work/processed.json" "$work/bad.dtb" 2>&1)
[ -z "$out" ] || { echo "$out"; echo "dt-check: the minimal node was refused"; exit 1; }
check_refused "no interrupts" 'compatible = "nvidia,nvdla-nv-full"; reg = <0xa0000000 0x20000>; resets = <&rst>;'
check_refused "no resets" 'compatible = "nvidia,nvdla-nv-full"; reg = <0xa0000000 0x20000>; interrupts = <0 93 4>;'
check_refused "two register windows" 'compatible = "nvidia,nvdla-nv-full"; reg = <0xa0000000 0x20000>, <0xb0000000 0x1000>; interrupts = <0 93 4>; resets = <&rst>;'
check_refused "a clock named bus" "$good clocks = <&clk>; clock-names = \"bus\";"
check_refused "three clock names" "$good clock-names = \"core\", \"csb\", \"extra\";"
check_refused "an unknown property" "$good nvidia,atom-size = <32>;"
echo "dt-check: $refused broken nodes refused"
