package task

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The memory profile is Pulp's file: a header, then "<seconds>\t<MB>" per sample,
// seconds counting two per sample from 0.
func TestMemoryProfileFormat(t *testing.T) {
	var buf bytes.Buffer
	done, tick, exited := make(chan struct{}), make(chan time.Time), make(chan struct{})
	go func() {
		defer close(exited)
		writeMemory(&buf, done, tick, func() int64 { return 3 << 19 })
	}()
	tick <- time.Time{}
	tick <- time.Time{}
	close(done)
	<-exited
	checkMemoryProfile(t, buf.Bytes(), 3)
	if want := "# Seconds\tMemory in MB\n0\t1.50\n2\t1.50\n4\t1.50\n"; buf.String() != want {
		t.Errorf("memory profile\n%q, want\n%q", buf.String(), want)
	}
}

var memoryLine = regexp.MustCompile(`^(\d+)\t\d+\.\d\d$`)

// checkMemoryProfile parses a memory profile and checks it has at least n samples.
func checkMemoryProfile(t *testing.T, b []byte, n int) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() || sc.Text() != "# Seconds\tMemory in MB" {
		t.Fatalf("memory profile header: %q", sc.Text())
	}
	samples := 0
	for sc.Scan() {
		m := memoryLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("memory profile line %d: %q", samples+2, sc.Text())
		}
		if s, _ := strconv.Atoi(m[1]); s != 2*samples {
			t.Errorf("memory profile line %d: %d seconds, want %d", samples+2, s, 2*samples)
		}
		samples++
	}
	if samples < n {
		t.Errorf("memory profile has %d samples, want at least %d", samples, n)
	}
}

// What the process samples is a plausible resident size.
func TestRSS(t *testing.T) {
	if n := rss(); n < 1<<20 {
		t.Errorf("rss %d bytes", n)
	}
}
