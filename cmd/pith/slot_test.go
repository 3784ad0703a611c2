package main

import "testing"

// A process takes the lowest slot no live process holds, and learns the worker that held
// it last.
func TestSlots(t *testing.T) {
	data := t.TempDir()
	first, err := takeSlot(data)
	if err != nil || first.previous != "" {
		t.Fatalf("first slot: %+v, %v", first, err)
	}
	if err := first.record("worker-a"); err != nil {
		t.Fatal(err)
	}
	second, err := takeSlot(data) // the first is held: another one
	if err != nil || second.previous != "" {
		t.Fatalf("second slot: %+v, %v", second, err)
	}
	if err := second.record("worker-b"); err != nil {
		t.Fatal(err)
	}
	first.f.Close() // its process ends
	again, err := takeSlot(data)
	if err != nil || again.previous != "worker-a" {
		t.Fatalf("slot after the first holder ended: %+v, %v; want the first slot, last held by worker-a", again, err)
	}
	second.f.Close()
	again.f.Close()
}
