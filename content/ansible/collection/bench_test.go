package collection

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkReadCommunityGeneral reads community.general 5.7.0 (2.2 MB, 3,360 entries,
// 758 plugins) from memory and reports the largest heap in use seen after a read
// (peak-heap-MiB, what the kept metadata costs) and the process's peak RSS
// (peak-RSS-MiB, VmHWM: the test binary, the tarball in memory and every read so far).
func BenchmarkReadCommunityGeneral(b *testing.B) {
	data := readFile(b, "community-general-5.7.0.tar.gz")
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	var peak uint64
	for b.Loop() {
		v, err := Read(bytes.NewReader(data), Options{})
		if err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		runtime.KeepAlive(v)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	if rss := peakRSS(); rss > 0 {
		b.ReportMetric(rss/(1<<20), "peak-RSS-MiB")
	}
}

// peakRSS is VmHWM from /proc/self/status, in bytes; 0 where there is none.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}
