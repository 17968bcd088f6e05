import {
  artificialSlots,
  cellTitle,
  formatPercent,
  meanUtilization,
  NO_FIGURE_COLOUR,
  slotCells,
  utilizationColour,
} from "../src/utilization";
import type { Agent } from "../src/types";

const gpu = (id: string) => ({ id, type: "cuda", brand: "NVIDIA A100", uuid: `GPU-${id}`, memory_mib: 40960 });
const cpu = (id: string) => ({ id, type: "cpu", brand: "Xeon (16 cores)", uuid: "", memory_mib: 0 });
const figure = (slot_id: string, utilization_percent: number, memory_used_mib = 0) => ({
  slot_id,
  utilization_percent,
  memory_used_mib,
});

const lightness = (rgb: string) => {
  const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b;
};

describe("utilization", () => {
  it("averages the reported figures, or says there are none", () => {
    expect(meanUtilization([figure("0", 10), figure("1", 30)])).toBe(20);
    expect(meanUtilization([figure("0", 10), figure("1", NaN)])).toBe(10);
    expect(meanUtilization([])).toBeNull();
    expect(formatPercent(66.6)).toBe("67%");
    expect(formatPercent(null)).toBe("—");
  });
  it("colours percentages from pale to dark, grey without a figure", () => {
    expect(utilizationColour(null)).toBe(NO_FIGURE_COLOUR);
    expect(utilizationColour(undefined)).toBe(NO_FIGURE_COLOUR);
    expect(utilizationColour(NaN)).toBe(NO_FIGURE_COLOUR);
    expect(utilizationColour(0)).toBe("rgb(224, 242, 254)");
    expect(utilizationColour(100)).toBe("rgb(30, 27, 75)");
    expect(utilizationColour(150)).toBe(utilizationColour(100));
    expect(utilizationColour(-5)).toBe(utilizationColour(0));
    let previous = Infinity;
    for (let p = 0; p <= 100; p += 10) {
      const l = lightness(utilizationColour(p));
      expect(l).toBeLessThan(previous);
      previous = l;
    }
    expect(utilizationColour(0)).not.toBe(NO_FIGURE_COLOUR);
  });
  it("tells artificial CPU slots from a real CPU slot and GPUs", () => {
    expect(artificialSlots([cpu("cpu0"), cpu("cpu1")])).toBe(true);
    expect(artificialSlots([cpu("cpu0")])).toBe(false); // one slot stands for the whole CPU
    expect(artificialSlots([gpu("0"), gpu("1")])).toBe(false);
    expect(artificialSlots([])).toBe(false);
  });
  it("makes one cell per slot with its figure, memory and disabled state", () => {
    const agent: Pick<Agent, "devices" | "utilization" | "disabled_slots" | "enabled"> = {
      devices: [gpu("0"), gpu("1"), gpu("2")],
      utilization: [figure("0", 87, 30822), figure("2", 5, 100), figure("9", 50)],
      disabled_slots: ["1"],
      enabled: true,
    };
    const cells = slotCells(agent);
    expect(cells.map((c) => [c.id, c.percent, c.memoryUsedMib, c.disabled])).toEqual([
      ["0", 87, 30822, false],
      ["1", null, null, true],
      ["2", 5, 100, false],
      ["9", 50, 0, false],
    ]);
    expect(cellTitle(cells[0])).toBe("slot 0 (NVIDIA A100): 87%, memory 30.1 GiB of 40.0 GiB");
    expect(cellTitle(cells[1])).toBe("slot 1 (NVIDIA A100): no utilisation reported, disabled");
    expect(slotCells({ ...agent, enabled: false }).every((c) => c.disabled)).toBe(true);
  });
  it("does not claim memory figures for CPU slots, and names artificial ones", () => {
    const cells = slotCells({
      devices: [cpu("cpu0"), cpu("cpu1")],
      utilization: [figure("cpu0", 40), figure("cpu1", 40)],
      disabled_slots: [],
      enabled: true,
    });
    expect(cells[0].memoryUsedMib).toBeNull();
    expect(cellTitle(cells[0])).toBe("slot cpu0 (Xeon (16 cores)): 40% (the host's CPU), memory not measured");
    expect(cellTitle(cells[1], true)).toBe(
      "slot cpu1 (Xeon (16 cores)): artificial CPU slot, no figure of its own",
    );
  });
});
