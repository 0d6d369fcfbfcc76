/*
 * td_kws_detect: posterior smoothing and keyword decisions for the kws application.
 *
 * Each inference window gives class probabilities p[0..n_labels). The detector keeps the
 * last `avg_windows` of them and averages (moving average, oldest first, float32). A
 * decision fires when the averaged score of a keyword (label index in [first_keyword,
 * keyword_end), so silence and unknown never fire; keyword_end is n_labels unless
 * td_kws_detect_set_keywords moved it, for models whose filler labels come last) reaches
 * its threshold (`threshold` for every label, or its own from td_kws_detect_set_threshold:
 * a model may hear some words less surely than others) and at least `avg_windows` windows
 * have been seen. After an event every label is quiet for `suppress_ms` of audio time, and
 * the same label fires again only after its averaged score has fallen below its threshold / 2
 * (a word stays in the 1 s model window for up to a second and more: one spoken word gives
 * one event). Pure C99, no state outside the struct, host-testable.
 */
#ifndef TD_KWS_DETECT_H
#define TD_KWS_DETECT_H

#include <stdint.h>

/* The app's generated settings may size the history to the model (labels) and the
 * detector (windows averaged): memory first. */
#if defined(__has_include)
#if __has_include(<td_kws_config.h>)
#include <td_kws_config.h>
#endif
#endif

#ifndef TD_KWS_MAX_LABELS
#define TD_KWS_MAX_LABELS 16u
#endif
#ifndef TD_KWS_MAX_AVG
#define TD_KWS_MAX_AVG 16u
#endif

typedef struct {
    /* configuration (td_kws_detect_init) */
    uint32_t n_labels;        /* <= TD_KWS_MAX_LABELS */
    uint32_t avg_windows;     /* 1..TD_KWS_MAX_AVG */
    uint32_t first_keyword;   /* labels below this never fire */
    uint32_t keyword_end;     /* nor do labels from this one on */
    float threshold[TD_KWS_MAX_LABELS]; /* per label, on the averaged probability, 0..1 */
    uint32_t suppress_ms;     /* quiet time after an event */
    /* state */
    float hist[TD_KWS_MAX_AVG][TD_KWS_MAX_LABELS];
    uint32_t seen;            /* windows pushed since init/reset */
    uint32_t next;            /* slot the next window goes to */
    uint32_t last_event_ms;
    uint16_t last_label;
    uint8_t have_event;
    uint8_t released;         /* last_label's score fell below its threshold / 2 since */
    float avg[TD_KWS_MAX_LABELS]; /* the latest averaged scores */
} td_kws_detector_t;

/* Returns 0, or -1 for out-of-range parameters (the struct is then unusable). */
int td_kws_detect_init(td_kws_detector_t *d, uint32_t n_labels, uint32_t avg_windows,
                       uint32_t first_keyword, float threshold, uint32_t suppress_ms);

/* Forget all windows and the last event (e.g. a new audio stream). */
void td_kws_detect_reset(td_kws_detector_t *d);

/* The keywords are labels [first, end): 0 on success, -1 unless first < end <= n_labels. */
int td_kws_detect_set_keywords(td_kws_detector_t *d, uint32_t first, uint32_t end);

/* Label `label`'s own threshold: 0 on success, -1 unless label < n_labels and
 * 0 < threshold <= 1. */
int td_kws_detect_set_threshold(td_kws_detector_t *d, uint32_t label, float threshold);

/* Push one window's probabilities (n_labels values) ending at time_ms of audio. Returns 1 and
 * sets *label and *score when a keyword fires, else 0. */
int td_kws_detect_push(td_kws_detector_t *d, const float *probs, uint32_t time_ms,
                       uint16_t *label, float *score);

#endif /* TD_KWS_DETECT_H */
