// Hyperparameters and searchers: parsing with field-named errors, sampling, grids, and each
// search method's rule; a search resumed from its saved state goes on exactly as it would have.
#include "master/experiments/searcher/searcher.h"

#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "master/experiments/searcher/adaptive_asha.h"
#include "master/experiments/searcher/asha_search.h"

namespace det::master::searcher {
namespace {

Hyperparameters Parse(const std::string& yaml) {
  auto parsed = ParseHyperparameters(YAML::Load(yaml));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : Hyperparameters{};
}

std::string ParseError(const std::string& yaml) {
  auto parsed = ParseHyperparameters(YAML::Load(yaml));
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(HyperparametersTest, EveryTypeAndNestingIsRead) {
  Hyperparameters hp = Parse(R"(
lr: {type: log, base: 10, minval: -4, maxval: -1}
layers: {type: int, minval: 1, maxval: 4, count: 2}
dropout: {type: double, minval: 0.0, maxval: 0.5}
act: {type: categorical, vals: [relu, tanh]}
batch: 32
fixed: {type: const, val: adam}
optimizer: {momentum: {type: double, minval: 0.8, maxval: 0.99}, nesterov: true}
)");
  EXPECT_EQ(hp["lr"].type, Hyperparameter::Type::kLog);
  EXPECT_EQ(hp["layers"].count, 2);
  EXPECT_EQ(hp["act"].vals.size(), 2u);
  EXPECT_EQ(hp["batch"].val, 32);
  EXPECT_EQ(hp["fixed"].val, "adam");
  EXPECT_EQ(hp["optimizer"].type, Hyperparameter::Type::kNested);
  EXPECT_EQ(hp["optimizer"].nested["nesterov"].val, true);
}

TEST(HyperparametersTest, BadEntriesAreNamedByTheirPath) {
  EXPECT_NE(ParseError("lr: {type: float, minval: 0, maxval: 1}")
                .find("hyperparameters.lr.type: \"float\" is not allowed"),
            std::string::npos);
  EXPECT_NE(ParseError("lr: {type: double, minval: 1, maxval: 0}")
                .find("hyperparameters.lr.maxval: must not be less than minval (1)"),
            std::string::npos);
  EXPECT_NE(ParseError("n: {type: int, minval: 0.5, maxval: 3}")
                .find("hyperparameters.n.minval: must be an integer"),
            std::string::npos);
  EXPECT_NE(ParseError("a: {b: {type: int, maxval: 3}}")
                .find("hyperparameters.a.b.minval: is required for type int"),
            std::string::npos);
  EXPECT_NE(ParseError("c: {type: categorical, vals: []}")
                .find("hyperparameters.c.vals: must be a non-empty list"),
            std::string::npos);
  EXPECT_NE(ParseError("d: {type: double, minval: 0, maxval: 1, step: 2}")
                .find("hyperparameters.d.step: unknown field"),
            std::string::npos);
}

TEST(HyperparametersTest, SamplesStayInRangeAndFollowTheSeed) {
  Hyperparameters hp = Parse(R"(
n: {type: int, minval: 1, maxval: 3}
x: {type: double, minval: 0.5, maxval: 0.75}
lr: {type: log, base: 10, minval: -3, maxval: -1}
act: {type: categorical, vals: [relu, tanh]}
)");
  SearchRng rng(7);
  std::set<int64_t> ints;
  for (int i = 0; i < 200; ++i) {
    nlohmann::json s = Sample(hp, rng);
    ints.insert(s["n"].get<int64_t>());
    EXPECT_GE(s["x"].get<double>(), 0.5);
    EXPECT_LT(s["x"].get<double>(), 0.75);
    EXPECT_GE(s["lr"].get<double>(), 0.001);
    EXPECT_LT(s["lr"].get<double>(), 0.1);
    EXPECT_TRUE(s["act"] == "relu" || s["act"] == "tanh");
  }
  EXPECT_EQ(ints, (std::set<int64_t>{1, 2, 3}));  // both ends included
  SearchRng a(42), b(42), c(43);
  EXPECT_EQ(Sample(hp, a), Sample(hp, b));
  EXPECT_NE(Sample(hp, a), Sample(hp, c));
}

TEST(HyperparametersTest, GridPointsAreSpacedRoundedAndInProductOrder) {
  auto points = GridPoints(Parse(R"(
a: {type: int, minval: 1, maxval: 4, count: 3}
b: {type: categorical, vals: [x, y]}
)"));
  ASSERT_TRUE(points.ok());
  std::vector<std::string> seen;
  for (const auto& p : *points) seen.push_back(p["a"].dump() + p["b"].get<std::string>());
  EXPECT_EQ(seen, (std::vector<std::string>{"1x", "1y", "3x", "3y", "4x", "4y"}));

  auto spaced = GridPoints(Parse(R"(
few: {type: int, minval: 1, maxval: 2, count: 5}
mid: {type: double, minval: 0, maxval: 1, count: 1}
lr: {type: log, base: 10, minval: -3, maxval: -1, count: 3}
)"));
  ASSERT_TRUE(spaced.ok());
  ASSERT_EQ(spaced->size(), 2u * 1u * 3u);  // count clamped to the 2 integers there are
  EXPECT_EQ((*spaced)[0]["mid"], 0.5);
  EXPECT_NEAR((*spaced)[1]["lr"].get<double>(), 0.01, 1e-12);

  auto missing = GridPoints(Parse("opt: {x: {type: double, minval: 0, maxval: 1}}"));
  EXPECT_EQ(missing.status().message(),
            "hyperparameters.opt.x.count: grid search is in use but count was not provided");
}

// Plays a search to its end: trials report validations at each of `checkpoints` (units of
// "batches") in turn, one report per step, with loss = |lr - 0.01| + 1/batches; a trial that is
// stopped, or trained to the last checkpoint, closes. After `save_at` steps the searcher is saved
// and restored. The transcript lists what the searcher asked for.
std::string Play(std::unique_ptr<Searcher> searcher, const SearcherConfig& config,
                 const Hyperparameters& hparams, std::vector<int64_t> checkpoints,
                 int save_at = -1) {
  std::string transcript;
  std::deque<std::pair<int64_t, size_t>> active;  // (request id, next checkpoint)
  std::map<int64_t, double> lr;
  std::function<void(std::vector<Operation>)> apply = [&](std::vector<Operation> ops) {
    for (const Operation& op : ops) {
      if (const auto* c = std::get_if<Create>(&op)) {
        transcript += "C" + std::to_string(c->request_id) + c->hparams.dump() + " ";
        lr[c->request_id] = c->hparams["lr"].get<double>();
        active.emplace_back(c->request_id, 0);
        apply(searcher->TrialCreated(c->request_id));
      } else if (const auto* s = std::get_if<Stop>(&op)) {
        transcript += "S" + std::to_string(s->request_id) + " ";
        std::erase_if(active, [&](const auto& t) { return t.first == s->request_id; });
        apply(searcher->TrialClosed(s->request_id));
      } else {
        transcript += "END";
      }
    }
  };
  apply(searcher->Start());
  for (int step = 0; !active.empty(); ++step) {
    if (step == save_at) {
      auto restored = Searcher::Restore(config, hparams, searcher->Save());
      EXPECT_TRUE(restored.ok()) << restored.status().ToString();
      searcher = std::move(restored).value();
    }
    const int64_t id = active.front().first;  // (clang cannot capture structured bindings)
    const size_t next = active.front().second;
    active.pop_front();
    const int64_t batches = checkpoints[next];
    auto ops = searcher->ValidationCompleted(
        id, {{"loss", std::abs(lr[id] - 0.01) + 1.0 / batches}, {"batches", batches}});
    EXPECT_TRUE(ops.ok()) << ops.status().ToString();
    const bool stopped = std::any_of(ops->begin(), ops->end(), [&](const Operation& op) {
      const auto* stop = std::get_if<Stop>(&op);
      return stop && stop->request_id == id;
    });
    if (next + 1 < checkpoints.size()) {
      active.emplace_back(id, next + 1);  // (a stop below takes it out again)
    } else if (!stopped) {
      ops->push_back(Stop{id});  // trained to the end: it closes
    }
    apply(std::move(*ops));
  }
  return transcript;
}

std::unique_ptr<Searcher> MakeSearcher(const SearcherConfig& config, const Hyperparameters& hp,
                                       uint32_t seed) {
  auto made = Searcher::Make(config, hp, seed);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return made.ok() ? std::move(made).value() : nullptr;
}

SearcherConfig Config(const std::string& name) {
  SearcherConfig config;
  config.name = name;
  config.metric = "loss";
  config.time_metric = "batches";
  config.max_time = 900;
  config.divisor = 3;
  config.num_rungs = 3;
  config.max_trials = 16;
  return config;
}

const Hyperparameters& LrSpace() {
  static const Hyperparameters hp = Parse("lr: {type: log, base: 10, minval: -4, maxval: -1}");
  return hp;
}

TEST(SearcherTest, RandomRunsMaxTrialsAtMostMaxConcurrentAtOnceThenEnds) {
  SearcherConfig config = Config("random");
  config.max_trials = 5;
  config.max_concurrent_trials = 2;
  EXPECT_EQ(MakeSearcher(config, LrSpace(), 1)->Start().size(), 2u);
  const std::string transcript = Play(MakeSearcher(config, LrSpace(), 1), config, LrSpace(), {900});
  EXPECT_EQ(std::count(transcript.begin(), transcript.end(), 'C'), 5);
  EXPECT_EQ(transcript.substr(transcript.size() - 3), "END");
}

TEST(SearcherTest, AnInvalidHyperparameterExitDoesNotCountAgainstMaxTrials) {
  SearcherConfig config = Config("random");
  config.max_trials = 1;
  auto searcher = MakeSearcher(config, LrSpace(), 1);
  ASSERT_EQ(searcher->Start().size(), 1u);
  EXPECT_TRUE(searcher->TrialExitedEarly(1, ExitReason::kInvalidHyperparameters).empty());
  auto replacement = searcher->TrialClosed(1);
  ASSERT_EQ(replacement.size(), 1u);
  EXPECT_EQ(std::get<Create>(replacement[0]).request_id, 2);
  auto end = searcher->TrialClosed(2);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(std::get<Shutdown>(end[0]), (Shutdown{false, false}));
}

TEST(SearcherTest, GridCreatesEveryPointFromTheEndOfTheList) {
  SearcherConfig config = Config("grid");
  const Hyperparameters hp = Parse("lr: {type: categorical, vals: [0.1, 0.01, 0.001]}");
  auto searcher = MakeSearcher(config, hp, 1);
  auto ops = searcher->Start();
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(std::get<Create>(ops[0]).hparams["lr"], 0.001);
  EXPECT_EQ(std::get<Create>(ops[2]).hparams["lr"], 0.1);
  searcher->TrialClosed(1);
  searcher->TrialExitedEarly(2, ExitReason::kErrored);
  searcher->TrialClosed(2);
  auto end = searcher->TrialClosed(3);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<Shutdown>(end[0]));
}

TEST(AshaTest, RungsSitAtMaxTimeOverPowersOfTheDivisor) {
  EXPECT_EQ(AshaSearch(Config("async_halving")).rung_units(),
            (std::vector<int64_t>{100, 300, 900}));
}

// Two rungs (50, 100 batches), divisor 2, 4 trials, 2 at a time.
TEST(AshaTest, ATrialGoesOnOnlyWithinTheBestOfItsRungAndEachStopStartsAnother) {
  SearcherConfig config = Config("async_halving");
  config.max_time = 100;
  config.divisor = 2;
  config.num_rungs = 2;
  config.max_trials = 4;
  config.max_concurrent_trials = 2;
  auto searcher = MakeSearcher(config, LrSpace(), 3);
  ASSERT_EQ(searcher->Start().size(), 2u);
  auto report = [&](int64_t id, double loss, int64_t batches) {
    auto ops = searcher->ValidationCompleted(id, {{"loss", loss}, {"batches", batches}});
    EXPECT_TRUE(ops.ok());
    std::string text;
    for (const auto& op : *ops) {
      if (const auto* c = std::get_if<Create>(&op)) text += "C" + std::to_string(c->request_id);
      if (const auto* s = std::get_if<Stop>(&op)) text += "S" + std::to_string(s->request_id);
      if (std::holds_alternative<Shutdown>(op)) text += "END";
    }
    return text;
  };
  EXPECT_EQ(report(1, 0.5, 50), "");       // best of one: on to rung 1 (not trained enough yet)
  EXPECT_EQ(report(2, 0.9, 50), "S2C3");   // second of two, only 1 goes on
  EXPECT_EQ(report(1, 0.4, 100), "S1C4");  // the top rung: done
  EXPECT_EQ(report(3, 0.1, 50), "");       // best of three
  EXPECT_EQ(report(4, 0.7, 50), "S4");     // third of four (2 go on); max_trials reached
  EXPECT_EQ(report(3, 0.05, 100), "S3");
  for (int64_t id : {1, 2, 4}) EXPECT_TRUE(searcher->TrialClosed(id).empty());
  auto end = searcher->TrialClosed(3);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<Shutdown>(end[0]));
}

TEST(AshaTest, LargerIsBetterEarlyExitsAndMissingMetricsAreHandled) {
  SearcherConfig config = Config("async_halving");
  config.max_time = 100;
  config.divisor = 2;
  config.num_rungs = 2;
  config.max_trials = 3;
  config.max_concurrent_trials = 2;
  config.smaller_is_better = false;
  AshaSearch asha(config);
  SearchRng rng(1);
  int64_t last = 0;
  SearchContext context{rng, LrSpace(), last};
  ASSERT_EQ(asha.Initial(context).size(), 2u);
  ASSERT_TRUE(asha.Validated(context, 1, {{"loss", 0.9}, {"batches", 50}}).ok());
  ASSERT_TRUE(asha.Validated(context, 2, {{"loss", 0.5}, {"batches", 50}}).ok());
  EXPECT_EQ(asha.RungTrials(0), (std::vector<int64_t>{1, 2}));               // 0.9 ranks first
  EXPECT_EQ(asha.ExitedEarly(context, 1, ExitReason::kErrored).size(), 0u);  // 3 asked for
  EXPECT_EQ(asha.RungTrials(1).back(), 1);  // the worst result where it stood

  auto bad = asha.Validated(context, 3, {{"batches", 50}});
  EXPECT_EQ(bad.status().message(),
            "validation metrics lack \"loss\" (a number), which the searcher needs");
}

TEST(AdaptiveAshaTest, BracketsFollowDeterminedsPlan) {
  SearcherConfig config = Config("adaptive_asha");
  config.max_trials = 10;
  config.max_concurrent_trials = 5;
  EXPECT_EQ(PlanBrackets(config), (std::vector<Bracket>{{3, 7, 3}, {2, 3, 2}}));
  config.mode = "aggressive";
  EXPECT_EQ(PlanBrackets(config), (std::vector<Bracket>{{3, 10, 5}}));
  config.mode = "conservative";
  config.max_concurrent_trials = 0;
  const auto plan = PlanBrackets(config);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[2].rungs, 1);
  EXPECT_EQ(plan[0].max_concurrent_trials, std::max(plan[2].max_trials, 3));
  config.bracket_rungs = {2, 4};
  EXPECT_EQ(PlanBrackets(config)[0].rungs, 4);
}

TEST(AdaptiveAshaTest, SixteenTrialsRunToTheEndAndTheSameSeedGivesTheSameSearch) {
  const SearcherConfig config = Config("adaptive_asha");
  const std::vector<int64_t> checkpoints = {100, 300, 900};
  const std::string first =
      Play(MakeSearcher(config, LrSpace(), 11), config, LrSpace(), checkpoints);
  EXPECT_EQ(std::count(first.begin(), first.end(), 'C'), 16);
  EXPECT_EQ(first.substr(first.size() - 3), "END");
  EXPECT_EQ(Play(MakeSearcher(config, LrSpace(), 11), config, LrSpace(), checkpoints), first);
  EXPECT_NE(Play(MakeSearcher(config, LrSpace(), 12), config, LrSpace(), checkpoints), first);
}

TEST(AdaptiveAshaTest, ASearchRestoredFromItsSavedStateGoesOnExactlyAsBefore) {
  const SearcherConfig config = Config("adaptive_asha");
  const std::vector<int64_t> checkpoints = {100, 300, 900};
  const std::string uninterrupted =
      Play(MakeSearcher(config, LrSpace(), 5), config, LrSpace(), checkpoints);
  for (int save_at : {1, 7, 20}) {
    EXPECT_EQ(Play(MakeSearcher(config, LrSpace(), 5), config, LrSpace(), checkpoints, save_at),
              uninterrupted)
        << "saved and restored after " << save_at << " reports";
  }
}

}  // namespace
}  // namespace det::master::searcher
