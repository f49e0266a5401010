// The optimizer state (first and second moments, last update) in buffers that share the parameter
// layout, and one update over every active tensor. Weight decay applies to matrices only.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/config/config.h"
#include "engine/model/model.h"

namespace normlab {

class Optimizer {
  public:
    // Allocates the moments and the last update (zeroed) in the model's parameter layout.
    explicit Optimizer(Model& model);
    ~Optimizer();
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    // Applies optimizer step `step` (1-based) with learning rate lr and gradient scale (clipping). With
    // telemetry (both pointers given, one double per layout entry) also writes each active entry's sum of
    // squares of its updated parameters and of its update, taken in the same pass; inactive ones get 0.
    void update(const TrainConfig& train, int64_t step, double lr, double grad_scale,
                double* param_squares = nullptr, double* update_squares = nullptr);
    // Zeroes the moments of the given entries (parameters that were just (re)initialised).
    void reset_entries(const std::vector<int>& entries);
    // Stages both moments and the last update for a move to transfer.target() (see Model::stage_move);
    // the optimizer follows the model's backend by itself once the transfer is committed.
    void stage_move(BackendTransfer& transfer);

    float* first_moment() { return m_first; }
    float* second_moment() { return m_second; }
    float* last_update() { return m_update; }

  private:
    Model& m_model;
    // The active entries of this step ordered by their learning-rate multiplier (model.parametrization:
    // one backend update per multiplier), as slices of the layout with their weight decays, and their
    // telemetry sums (capacity for every entry, so a step allocates nothing).
    struct ActiveEntry {
        double lr_multiplier = 1.0;
        int entry = 0;
        float weight_decay = 0.0f;
    };
    std::vector<ActiveEntry> m_active;
    std::vector<Slice> m_slices;
    std::vector<float> m_weight_decays;
    std::vector<double> m_param_squares;
    std::vector<double> m_update_squares;
    float* m_first = nullptr;
    float* m_second = nullptr;
    float* m_update = nullptr;
};

}  // namespace normlab
