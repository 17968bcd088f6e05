import { parseRoute } from "../src/router";

describe("parseRoute", () => {
  it("reads the models' pages, a model by its name as its page address spells it", () => {
    expect(parseRoute("#/models")).toEqual({ page: "models" });
    expect(parseRoute("#/models/mnist%20cnn")).toEqual({ page: "model", name: "mnist cnn" });
    expect(parseRoute("#/experiments/3")).toEqual({ page: "experiment", id: 3 });
    expect(parseRoute("#/models/%E0")).toEqual({ page: "model", name: "%E0" });
    expect(parseRoute("#/nowhere")).toEqual({ page: "cluster" });
  });
});
