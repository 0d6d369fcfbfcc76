/* td_audio_slots.c: see td_audio_slots.h. */
#include "td_audio_slots.h"

int td_audio_slots_init(td_audio_slots_t *s, const td_audio_config_t *cfg, uint32_t max_block)
{
    uint32_t i;
    if (cfg == 0 || cfg->ring == 0 || cfg->nblocks < 3u || cfg->nblocks > TD_AUDIO_MAX_SLOTS ||
        cfg->block_samples == 0u || cfg->block_samples > max_block)
        return -1;
    s->cfg = *cfg;
    for (i = 0; i < cfg->nblocks; i++)
        s->state[i] = TD_SLOT_FREE;
    s->last_armed = cfg->nblocks - 1u;
    s->lost_samples = 0u;
    return 0;
}

int32_t td_audio_slots_arm(td_audio_slots_t *s)
{
    uint32_t i = (s->last_armed + 1u) % s->cfg.nblocks;
    if (s->state[i] != TD_SLOT_FREE)
        return -1;
    s->state[i] = TD_SLOT_ARMED;
    s->last_armed = i;
    return (int32_t)i;
}

int16_t *td_audio_slots_samples(td_audio_slots_t *s, int32_t i)
{
    return &s->cfg.ring[(uint32_t)i * s->cfg.block_samples];
}

void td_audio_slots_ready(td_audio_slots_t *s, int32_t i, uint32_t n)
{
    s->block[i] = n;
    s->state[i] = TD_SLOT_READY;
}

int32_t td_audio_slots_oldest_ready(const td_audio_slots_t *s)
{
    int32_t best = -1;
    uint32_t i;
    for (i = 0; i < s->cfg.nblocks; i++) {
        if (s->state[i] == TD_SLOT_READY &&
            (best < 0 || s->block[i] < s->block[(uint32_t)best]))
            best = (int32_t)i;
    }
    return best;
}

const int16_t *td_audio_slots_take(td_audio_slots_t *s, uint32_t *block)
{
    int32_t i = td_audio_slots_oldest_ready(s);
    if (i < 0)
        return 0;
    s->state[i] = TD_SLOT_TAKEN;
    *block = s->block[i];
    return td_audio_slots_samples(s, i);
}

void td_audio_slots_release(td_audio_slots_t *s, uint32_t upto)
{
    uint32_t i;
    for (i = 0; i < s->cfg.nblocks; i++) {
        if ((s->state[i] == TD_SLOT_TAKEN || s->state[i] == TD_SLOT_READY) &&
            s->block[i] < upto)
            s->state[i] = TD_SLOT_FREE;
    }
}
