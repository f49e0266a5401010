// NormLab's self-check of a compute backend where it runs (docs/cuda.md#self-check-on-first-use): tiny
// models trained a few steps on the backend and on CpuReferenceBackend from the same seed, with loss,
// telemetry, every gradient, update and parameter compared within the parity tolerances (parity.h).
// It sits above model/ and train/ (it builds a Model and an Optimizer on the backend it is given).
#pragma once
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/parity.h"
#include "engine/model/model.h"

namespace normlab {

// One row of the report: one kind of value of one tiny model over every step, by its worst item (the
// largest error for its tolerance).
struct SelfTestCheck {
    std::string model;     // e.g. "Pre-LN LayerNorm, QK-norm, z-loss"
    std::string quantity;  // loss, telemetry, gradients, updates, parameters
    ParityCheck worst;
    int worst_step = 0;
    int compared = 0;  // items compared over every step
    bool passed() const { return worst.passed(); }
};

struct SelfTestReport {
    std::string candidate;  // the checked backend's name()
    std::string reference;  // the CPU reference's
    std::vector<SelfTestCheck> checks;
    // The first item over its tolerance, in the order the steps computed them (so the op that is off
    // shows before what it spoiled downstream), with its model and step; empty when everything agreed.
    std::string first_difference;
    double seconds = 0.0;
    bool passed() const { return first_difference.empty(); }
};

// Runs the check on `candidate` (well under a second on a CPU or a GPU). Throws what the backend throws
// (e.g. ResourceError when its memory runs out).
SelfTestReport run_backend_selftest(Backend& candidate);

// The parts of the comparison the CUDA parity tests share (tests/cuda/test_cuda_model.cpp): one
// forward pass's loss and counts (scored and correct rows: equal), its telemetry (every row of
// ForwardStats' field tables, engine/model/forward_stats.h), and every active parameter entry's
// gradients or values, one check per field or entry.
std::vector<ParityCheck> compare_loss(const ForwardStats& actual, const ForwardStats& reference);
std::vector<ParityCheck> compare_telemetry(const ForwardStats& actual, const ForwardStats& reference);
std::vector<ParityCheck> compare_entries(Model& actual, Model& reference, bool gradient);

}  // namespace normlab
