"""Linear regression by minibatch gradient descent on synthetic data (standard library only).

Every trial learns y = w.x + b from the same 512 generated points; its hyperparameters are the
learning rate and the batch size. It validates and checkpoints every `min_validation_period`
batches, resumes from its latest checkpoint (after a pause, a preemption or a crash) and, when the
master asks it to stop (det_harness's should_preempt, checked every batch), checkpoints and stops.
"""
import random
import sys
import time

import det_harness

DIM = 4


def make_data(seed=1234, count=512):
    rng = random.Random(seed)
    true_w = [rng.uniform(-2, 2) for _ in range(DIM)]
    true_b = rng.uniform(-1, 1)
    points = []
    for _ in range(count):
        x = [rng.uniform(-1, 1) for _ in range(DIM)]
        y = sum(wi * xi for wi, xi in zip(true_w, x)) + true_b + rng.gauss(0, 0.05)
        points.append((x, y))
    return points[:448], points[448:]


def predict(state, x):
    return sum(wi * xi for wi, xi in zip(state["w"], x)) + state["b"]


def mean_squared_error(state, points):
    return sum((predict(state, x) - y) ** 2 for x, y in points) / len(points)


def sgd_step(state, batch, learning_rate):
    grad_w = [0.0] * DIM
    grad_b = 0.0
    for x, y in batch:
        error = predict(state, x) - y
        for i in range(DIM):
            grad_w[i] += 2 * error * x[i] / len(batch)
        grad_b += 2 * error / len(batch)
    state["w"] = [wi - learning_rate * gi for wi, gi in zip(state["w"], grad_w)]
    state["b"] -= learning_rate * grad_b
    return mean_squared_error(state, batch)


def main():
    ctx = det_harness.init()
    hparams = ctx.hparams
    learning_rate = float(hparams.get("learning_rate", 0.05))
    batch_size = int(hparams.get("batch_size", 16))
    step_seconds = float(hparams.get("step_seconds", 0))
    fail_at = int(hparams.get("fail_at_step", 0))  # for tests: crash once there
    train, validation = make_data()
    state = ctx.load_checkpoint() or {"steps": 0, "w": [0.0] * DIM, "b": 0.0}
    period = ctx.validation_period or 10
    print("trial %d run %d: starting at step %d of %d (lr %.4g, batch %d)"
          % (ctx.trial_id, ctx.run_id, state["steps"], ctx.max_length, learning_rate, batch_size))
    while state["steps"] < ctx.max_length:
        rng = random.Random(ctx.trial_seed * 1000003 + state["steps"])
        loss = sgd_step(state, rng.sample(train, batch_size), learning_rate)
        state["steps"] += 1
        steps = state["steps"]
        if step_seconds:
            time.sleep(step_seconds)
        if fail_at and steps == fail_at and ctx.run_id == 1:
            print("failing on purpose at step %d" % steps)
            sys.exit(7)
        if steps % 5 == 0:
            ctx.report_training_metrics(steps, {"loss": loss})
        if steps % period == 0 or steps == ctx.max_length:
            ctx.report_validation_metrics(
                steps, {"validation_loss": mean_squared_error(state, validation)})
            ctx.save_checkpoint(steps, state)
            saved = True
        else:
            saved = False
        # Every batch (should_preempt asks the master at most once a second): a preemption or
        # the machine's end is answered with a checkpoint now, not at the next period.
        if steps < ctx.max_length and ctx.should_preempt():
            if not saved:
                ctx.save_checkpoint(steps, state)
            print("stopping at step %d: %s" % (steps, ctx.stop_reason))
            return 0
    print("trial %d done at step %d" % (ctx.trial_id, state["steps"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
