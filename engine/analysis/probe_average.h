// Probes averaged over initialisations: one probe per seed, combined field by field (each seed's
// norm_of_mean, resid, dependency and output change averaged), plus the per-block profile of one
// gradient (w_2's norm_of_mean, Xiong et al.'s Figure 3) and how far it spreads, per seed and averaged.
#pragma once
#include <string>
#include <vector>

#include "engine/analysis/probe.h"

namespace normlab {

// The mean of probes of the same model shape (same blocks), field by field.
ProbeResult average_probes(const std::vector<ProbeResult>& probes);
OutputChange average_output_changes(const std::vector<OutputChange>& changes);

// A per-block profile and its shape: last block over first, largest over smallest.
struct ProfileShape {
    std::vector<double> values;
    double last_over_first = 0.0;
    double max_over_min = 0.0;
};
// w_2's norm_of_mean over the decoder's blocks.
ProfileShape w2_profile(const ProbeResult& probe);

// "0.200 0.298 ... (last/first 6.43, max/min 6.43)"
std::string describe(const ProfileShape& shape);

}  // namespace normlab
