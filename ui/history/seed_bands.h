// What a seed group's entry holds beyond its mean line (ui/history/seed_group.h builds it): the band
// around the mean loss and validation loss at each logged step, which spread it is, and the members.
#pragma once
#include <QString>
#include <cstdint>
#include <vector>

#include "ui/history/decimated_series.h"

namespace normlab::ui {

// The band a group's charts draw: the mean's 95% Student t interval (t_{0.975, n-1} sd / sqrt(n)) or
// one sample sd either side, over the seeds that logged the step (none where fewer than two did).
enum class Spread { Ci95, Sd };
QString spreadName(Spread spread);  // "95% CI", "sd"
// Seeds in words: "1-5" when consecutive, else "1, 3, 8".
QString seedListText(const std::vector<uint64_t>& seeds);

struct SeedBands {
    Spread spread = Spread::Ci95;
    std::vector<int> members;  // the runs averaged (hidden in the store unless seedsShown)
    QString seeds;             // their seeds in words: "1-5", "1, 3, 8"
    bool seedsShown = false;
    size_t expected = 0;  // the seeds group.json names (members lacks those not started yet)
    int seedsLogged = 0;  // the most seeds behind a band point (a finite training loss at its step)
    int seedsFewest = 0;  // the fewest behind a band point (a seed diverged or not there yet)
    DecimatedSeries lossLow, lossHigh, valLow, valHigh;  // appended at the same steps, pairwise
    QString summary;                                     // "5 seeds: 4 completed, 1 diverged at step 120"
};

}  // namespace normlab::ui
