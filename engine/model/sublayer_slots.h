// The one layout of per-sub-layer arrays (the model's activations, residual sums and
// ForwardStats::sublayers, by slot): [2L decoder | L cross-attention | 2E encoder], with decoder block
// b's attention and FFN at 2b and 2b + 1, its cross-attention at 2L + b and encoder block b's attention
// and FFN at 3L + 2b and 3L + 2b + 1; and of attention statistics: [L decoder | L cross | E encoder].
#pragma once
#include <algorithm>

#include "engine/config/config.h"

namespace normlab {

// What a residual sub-layer computes; attention and FFN are also their index into admin_omega.
enum SublayerKind : int { kAttentionSublayer = 0, kFeedForwardSublayer = 1, kCrossAttentionSublayer = 2 };

// The sub-layer a slot holds.
struct SublayerAt {
    SublayerKind kind = kAttentionSublayer;
    int block = 0;
    bool encoder = false;
};

class SublayerSlots {
  public:
    SublayerSlots(int layers, int encoder_layers)
        : m_layers(layers), m_encoder_layers(std::max(0, encoder_layers)) {}
    explicit SublayerSlots(const ModelConfig& model) : SublayerSlots(model.layers, model.encoder_layers) {}

    int count() const { return 2 * m_layers + (m_encoder_layers > 0 ? m_layers + 2 * m_encoder_layers : 0); }
    // The decoder's attention and FFN sub-layers come first: slots [0, decoder_count()).
    int decoder_count() const { return 2 * m_layers; }
    // Decoder block `block`'s attention, FFN or cross-attention sub-layer.
    int of(SublayerKind kind, int block) const {
        return kind == kCrossAttentionSublayer ? 2 * m_layers + block : 2 * block + kind;
    }
    // Encoder block `block`'s attention or FFN sub-layer.
    int of_encoder(SublayerKind kind, int block) const { return 3 * m_layers + 2 * block + kind; }
    // The inverse of of() and of_encoder().
    SublayerAt at(int slot) const {
        if (slot < 2 * m_layers) return {static_cast<SublayerKind>(slot % 2), slot / 2, false};
        if (slot < 3 * m_layers) return {kCrossAttentionSublayer, slot - 2 * m_layers, false};
        const int encoder_slot = slot - 3 * m_layers;
        return {static_cast<SublayerKind>(encoder_slot % 2), encoder_slot / 2, true};
    }

    // Attention statistics: one slot per attention sub-layer.
    int attention_count() const {
        return m_layers + (m_encoder_layers > 0 ? m_layers + m_encoder_layers : 0);
    }
    int attention_of(SublayerKind kind, int block) const {  // a decoder block's attention or cross-attention
        return kind == kCrossAttentionSublayer ? m_layers + block : block;
    }
    int attention_of_encoder(int block) const { return 2 * m_layers + block; }

  private:
    int m_layers;
    int m_encoder_layers;
};

}  // namespace normlab
