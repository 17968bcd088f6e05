import { agentView, decisionView, experimentView, instanceView, timeNs } from "../src/determined";

describe("determined adapters", () => {
  it("reads RFC 3339 times as nanoseconds, none as 0", () => {
    expect(timeNs("1970-01-01T00:00:01Z")).toBe(1e9);
    expect(timeNs(undefined)).toBe(0);
    expect(timeNs("not a time")).toBe(0);
  });
  it("turns the autoscaler's instances and decisions into the page's views", () => {
    const live = instanceView({
      id: "i-1",
      resourcePool: "gpu",
      provider: "aws",
      instanceType: "p3.2xlarge",
      zone: "us-west-2a",
      spot: true,
      state: "running",
      agent: "connected",
      launchedAt: "1970-01-01T01:00:00Z",
    });
    expect(live.resource_pool).toBe("gpu");
    expect(live.instance_type).toBe("p3.2xlarge");
    expect(live.launched_at).toBe(3.6e12);
    expect(live.terminated_at).toBe(0); // still running
    const decision = decisionView({
      resourcePool: "gpu",
      decidedAt: "1970-01-01T00:00:02Z",
      launch: 1,
      launched: ["i-1"],
      launchReason: "2 slots wait",
      terminated: [],
      error: "",
    });
    expect(decision.decided_at).toBe(2e9);
    expect(decision.launch_reason).toBe("2 slots wait");
  });
  it("reads an agent's slots by id", () => {
    const agent = agentView({
      id: "a1",
      state: "STATE_ACTIVE",
      resourcePools: ["default"],
      slots: { "0": { id: "0", enabled: true, draining: false, device: { type: "TYPE_CUDA", brand: "H200" } } },
    } as never);
    expect(agent.slots).toBe(1);
    expect(agent.devices[0].type).toBe("cuda");
  });
});

describe("experimentView", () => {
  it("reads the checkpoint totals and what checkpoint_storage keeps, Determined's defaults filling in", () => {
    const base = {
      id: 1,
      name: "e",
      state: "STATE_COMPLETED",
      searcherType: "single",
      numTrials: 1,
      startTime: "2026-11-29T00:00:00Z",
      username: "admin",
      originalConfig: "",
      checkpointCount: 2,
      checkpointSize: "1048576",
    };
    const e = experimentView({ ...base, config: { checkpoint_storage: { save_trial_best: 3 } } });
    expect(e.checkpoint_count).toBe(2);
    expect(e.checkpoint_bytes).toBe(1048576);
    expect(e.checkpoint_policy).toEqual({ experiment_best: 0, trial_best: 3, trial_latest: 1 });
    expect(experimentView(base).checkpoint_policy).toEqual({ experiment_best: 0, trial_best: 1, trial_latest: 1 });
  });
});
