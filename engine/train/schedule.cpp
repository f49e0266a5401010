// Implements the schedule formulas of docs/science.md. Warmup: lr * t / T for t <= T; Noam:
// lr * d^-0.5 * min(t^-0.5, t * w^-1.5) (train.lr is Noam's factor, warmup_steps its w).
#include "engine/train/schedule.h"

#include <algorithm>
#include <cmath>

namespace normlab {

double learning_rate(const TrainConfig& train, int d_model, int64_t step) {
    const double t = static_cast<double>(std::max<int64_t>(step, 1));
    const double warmup = train.warmup_steps;
    if (train.schedule == ScheduleKind::Noam) {
        const double w = std::max(1.0, warmup);
        return train.lr / std::sqrt(static_cast<double>(d_model)) *
               std::min(1.0 / std::sqrt(t), t * std::pow(w, -1.5));
    }
    if (warmup > 0 && t <= warmup) return train.lr * t / warmup;

    const double floor = train.lr * train.min_lr_ratio;
    const double decay_steps = std::max(1.0, static_cast<double>(train.steps) - warmup);
    const double progress = std::clamp((t - warmup) / decay_steps, 0.0, 1.0);
    switch (train.schedule) {
        case ScheduleKind::Constant:
            return train.lr;
        case ScheduleKind::Linear:
            return floor + (train.lr - floor) * (1.0 - progress);
        case ScheduleKind::Cosine:
            return floor + (train.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
        case ScheduleKind::InverseSqrt:
            return train.lr * std::sqrt(std::max(1.0, warmup) / std::max(t, std::max(1.0, warmup)));
        case ScheduleKind::Noam:
            break;
    }
    return train.lr;
}

double radam_rectification(double beta2, int64_t step) {
    const double t = static_cast<double>(step);
    const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    const double beta2_t = std::pow(beta2, t);
    const double rho_t = rho_inf - 2.0 * t * beta2_t / (1.0 - beta2_t);
    if (rho_t <= 4.0) return 0.0;
    return std::sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
}

}  // namespace normlab
