// The files of one sweep point's claim (docs/formats.md#sweep-folders): S/claims/<id>.json names the
// worker holding point <id> and a random token of that hold; S/claims/<id>.<token>.beat is a counter
// only that worker rewrites while it trains; S/claims/<id>.<key>.takeover<n> marks the n-th attempt to
// take over the hold <key>. Everything here is read as hostile: a torn, foreign or odd file reads as a
// claim nobody keeps alive, never as an error.
#pragma once
#include <optional>
#include <string>

namespace normlab {

struct ClaimInfo {
    std::string host;
    long pid = 0;
    std::string token;  // empty for a torn or foreign claim
    std::string key;    // names this hold: the token, or the file's identity when it has none
    // On this host, its process no longer exists (or is a zombie): dead without watching it.
    bool process_gone() const;
};

std::string this_host();
std::string new_claim_token();  // 16 random hex digits
std::string claim_text(const std::string& token);

std::string claim_path(const std::string& sweep_dir, const std::string& id);
std::string beat_path(const std::string& sweep_dir, const std::string& id, const std::string& key);
std::string takeover_path(const std::string& sweep_dir, const std::string& id, const std::string& key, int n);

// Why claims/<id>.json cannot be a claim (a folder, a link or a device planted there), or nothing:
// no worker could create or replace it, so the point is refused rather than waited on.
std::optional<std::string> claim_file_problem(const std::string& sweep_dir, const std::string& id);

// The claim at `path`; nothing when there is none.
std::optional<ClaimInfo> read_claim_file(const std::string& path);
// A beat file's text (at most a few bytes); nothing when missing or unreadable.
std::optional<std::string> read_beat(const std::string& path);

}  // namespace normlab
