// The normlab-cli subcommands; each returns the process exit code (0 ok, 2 bad input) or throws
// InputError, which main() turns into a message and exit code 2.
#pragma once

namespace normlab::cli {

int run_train(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_presets(int argc, char** argv);
int run_dump_grads(int argc, char** argv);
int run_probe(int argc, char** argv);
// probe --freeze-norms (cmd_probe_freeze.cpp): whether it was asked for, and the command.
bool wants_freeze_norms(int argc, char** argv);
int run_freeze_norms_probe(int argc, char** argv);
// probe --coord-check (cmd_probe_coord.cpp): whether it was asked for, and the command.
bool wants_coord_check(int argc, char** argv);
int run_coord_check_probe(int argc, char** argv);
int run_runs(int argc, char** argv);
int run_compare(int argc, char** argv);
int run_export(int argc, char** argv);
int run_export_hf(int argc, char** argv);  // export --hf DIR (export_hf.cpp)
int run_sweep(int argc, char** argv);
// selftest (cmd_selftest.cpp): 0 when the backend agrees with the CPU reference, 1 on a mismatch.
int run_selftest(int argc, char** argv);

}  // namespace normlab::cli
