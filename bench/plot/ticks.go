package plot

import (
	"math"
	"strconv"
)

// niceTicks returns evenly spaced tick values covering [lo, hi] with a step of
// 1, 2 or 5 times a power of ten, chosen so there are about target intervals.
// The first tick is <= lo and the last >= hi, so the axis can span the ticks.
func niceTicks(lo, hi float64, target int) []float64 {
	lo, hi = widen(lo, hi)
	step := niceStep((hi - lo) / float64(max(target, 1)))
	first := math.Floor(lo/step + 1e-9)
	last := math.Ceil(hi/step - 1e-9)
	ticks := make([]float64, 0, int(last-first)+1)
	for k := first; k <= last; k++ {
		ticks = append(ticks, k*step)
	}
	return ticks
}

// widen turns an empty range into a small one around the value.
func widen(lo, hi float64) (float64, float64) {
	if hi > lo {
		return lo, hi
	}
	if lo == 0 {
		return 0, 1
	}
	d := math.Abs(lo) * 0.1
	return lo - d, hi + d
}

// niceStep rounds raw to the nearest of 1, 2, 5 or 10 times a power of ten
// (in a log sense), so the interval count lands near the target.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch norm := raw / mag; {
	case norm < 1.5:
		return mag
	case norm < 3:
		return 2 * mag
	case norm < 7:
		return 5 * mag
	}
	return 10 * mag
}

// logTicks returns ticks at 1, 2 and 5 times powers of ten covering [lo, hi],
// both of which must be positive. Ranges wider than about four decades get
// ticks at powers of ten only, so the labels stay readable.
func logTicks(lo, hi float64) []float64 {
	if hi < lo {
		lo, hi = hi, lo
	}
	mults := []float64{1, 2, 5}
	if math.Log10(hi/lo) > 4.5 {
		mults = []float64{1}
	}
	var all []float64
	for e := math.Floor(math.Log10(lo)) - 1; e <= math.Ceil(math.Log10(hi))+1; e++ {
		for _, m := range mults {
			all = append(all, m*math.Pow(10, e))
		}
	}
	first, last := 0, len(all)-1
	for i, v := range all {
		if v <= lo*(1+1e-9) {
			first = i
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i] >= hi*(1-1e-9) {
			last = i
		}
	}
	if last == first { // lo == hi on a tick: show the neighbours too
		first, last = first-1, last+1
	}
	return all[first : last+1]
}

// formatCompact formats v with at most sig significant digits and a k, M, G or
// T suffix for thousands and up: 1500 -> "1.5k", 1.2e6 -> "1.2M", 0.25 -> "0.25".
func formatCompact(v float64, sig int) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sig, 64), 64)
	if err != nil || math.IsInf(r, 0) || math.IsNaN(r) {
		return strconv.FormatFloat(v, 'g', sig, 64)
	}
	if r == 0 {
		return "0"
	}
	a := math.Abs(r)
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if a >= u.div && a < u.div*1000 {
			return strconv.FormatFloat(r/u.div, 'g', sig, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(r, 'g', sig, 64)
}

// tickLabels formats ticks compactly, adding significant digits until
// neighbouring labels differ (so 10000 and 10005 do not both read "10k").
func tickLabels(ticks []float64) []string {
	var labels []string
	for sig := 3; sig <= 12; sig++ {
		labels = make([]string, len(ticks))
		for i, t := range ticks {
			labels[i] = formatCompact(t, sig)
		}
		if distinct(labels) {
			break
		}
	}
	return labels
}

func distinct(labels []string) bool {
	for i := 1; i < len(labels); i++ {
		if labels[i] == labels[i-1] {
			return false
		}
	}
	return true
}
