// Per-block telemetry from one forward pass: ForwardStats' per-block lists and per-slot lists (read
// through the sub-layer slot layout) copied into a block's LayerTelemetry. A forward-pass telemetry
// field is one line here.
#pragma once
#include "engine/model/model.h"
#include "engine/model/sublayer_slots.h"
#include "engine/train/telemetry.h"

namespace normlab {

// Fills `layer` with what the forward pass measured for decoder (or, with `encoder`, encoder) block
// `block`: residual sums, and where measured (telemetry steps) attention statistics, norm scales, q and
// k RMS and dependency ratios; a decoder block of an encoder-decoder model also its cross-attention's.
// Values not measured are left as they are.
void copy_forward_stats(const ForwardStats& forward, const SublayerSlots& slots, int block, bool encoder,
                        LayerTelemetry& layer);

}  // namespace normlab
