// The learning-rate edge of one (variant, seed): a bisection in log space for the largest value of a
// key (train.lr) that still trains, between a low value that must pass and a high one that must fail.
// A pure state machine: the state is replayed from the probes' results alone, so a search resumes from
// whatever probes have finished, on any machine, and gives the same answer as one never interrupted.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace normlab {

// What "still trains" means for a finished probe (docs/cli.md#sweep-edge).
struct EdgeCriterion {
    enum class Kind { Diverged, LossAbove, WorseThanBest };
    Kind kind = Kind::Diverged;
    double threshold = 0.0;  // LossAbove: the loss X; WorseThanBest: the factor F (> 1)
};
// "diverged", "loss_above=X" (X > 0) or "worse_than_best=F" (F > 1); else InputError saying which.
EdgeCriterion parse_edge_criterion(const std::string& text);
std::string to_string(const EdgeCriterion& criterion);

// A finished probe: diverged, or its final loss (nothing when it ended without a finite one).
struct ProbeResult {
    bool diverged = false;
    std::optional<double> final_loss;
};

struct EdgeBounds {
    double low = 0.0, high = 0.0;  // 0 < low < high
    double tolerance = 0.05;       // stop once first fail / last pass <= 1 + tolerance
};
// The smallest tolerance accepted: probes are rounded to 4 significant digits.
inline constexpr double kMinEdgeTolerance = 0.005;

enum class EdgeStatus {
    Probing,    // probes are wanted
    Bracketed,  // last_pass passes, first_fail fails, and first_fail / last_pass <= 1 + tolerance
    BelowLow,   // the low value already fails: the edge is below the range
    AboveHigh,  // the high value still passes: the edge is above the range
};
const char* to_string(EdgeStatus status);

struct JudgedProbe {
    double value = 0.0;
    ProbeResult result;
    bool passed = false;
};

struct EdgeSearchState {
    EdgeStatus status = EdgeStatus::Probing;
    std::optional<double> last_pass, first_fail;  // the bracket so far
    std::vector<JudgedProbe> probes;              // every probe judged, in the order probed
    std::vector<double> wanted;                   // Probing: the values to run next (a round)
};

// The geometric midpoint of (low, high), rounded to 4 significant digits (readable, stable ids).
double edge_midpoint(double low, double high);
// The most probes a search takes: low, high and the bisection rounds.
int edge_max_probes(const EdgeBounds& bounds);

// Replays the search: round 1 probes low and high, each later round the midpoint of the bracket.
// `result_of(value)` is a finished probe's result, or nothing while it has not finished. A probe
// passes when it did not diverge and its final loss is finite and, by the criterion, not above X,
// or not above F x the best final loss among the probes judged so far (its own round's included).
EdgeSearchState replay_edge_search(const EdgeBounds& bounds, const EdgeCriterion& criterion,
                                   const std::function<std::optional<ProbeResult>(double)>& result_of);

}  // namespace normlab
