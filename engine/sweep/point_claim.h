// A worker's claim on one sweep point, so that any number of workers (this machine's jobs, Slurm array
// tasks, GNU parallel, ...) run each point once, safe under arbitrary pauses (SIGSTOP, a suspended job)
// and clock skew between hosts: no time written by one host is compared with another's clock. A claim
// is stale when its process on this host is gone, or when its heartbeat counter stayed unchanged for
// `stale_after` seconds of the observer's own clock; one worker wins each takeover (an O_EXCL marker),
// and the holder checks the claim still names its token before every file it replaces (fence()), so a
// worker that lost its claim stops and writes nothing more. The protocol: docs/reliability.md.
#pragma once
#include <optional>
#include <string>

#include "engine/core/write_fence.h"
#include "engine/sweep/claim_file.h"

namespace normlab {

struct ClaimTiming {
    double stale_after = 60.0;  // seconds a claim's heartbeat must stay unchanged to be stale
    double beat_every = 5.0;    // seconds between the holder's heartbeats
    // The defaults, or NORMLAB_TEST_CLAIM_STALE_SECONDS (test-only: beats then come 12 times as often).
    static ClaimTiming from_environment();
};

class PointClaim {
  public:
    // Claims the point for this process. Nothing when another worker's claim holds it: a live one
    // (its heartbeat moved while watched, up to stale_after seconds) or one being taken over. Throws
    // InputError when S/claims is not a real folder inside S.
    static std::optional<PointClaim> acquire(const std::string& sweep_dir, const std::string& id,
                                             const ClaimTiming& timing = ClaimTiming::from_environment());
    // The current claim on a point, if any.
    static std::optional<ClaimInfo> read(const std::string& sweep_dir, const std::string& id);
    // Whether a claim looks live to a reader that cannot watch it (sweep status): its process is not
    // known gone and its beat file changed within stale_after by this host's clock (display only).
    static bool looks_live(const std::string& sweep_dir, const std::string& id, const ClaimInfo& claim,
                           double stale_after = ClaimTiming().stale_after);

    PointClaim(PointClaim&& other) noexcept;
    PointClaim& operator=(PointClaim&&) = delete;
    ~PointClaim();  // releases the claim (if it is still this hold's)

    const ClaimTiming& timing() const { return m_timing; }
    bool holds() const;        // S/claims/<id>.json still names this hold's token
    void check() const;        // throws WriteFenceLost unless holds()
    WriteFence fence() const;  // check() for the point's writers (usable while this claim lives)
    void heartbeat();          // check(), then moves the heartbeat counter on

  private:
    PointClaim(std::string sweep_dir, std::string id, std::string token, ClaimTiming timing);
    std::string m_sweep_dir, m_id, m_token;
    ClaimTiming m_timing;
    long m_beats = 0;
};

}  // namespace normlab
