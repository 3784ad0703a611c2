// Package plot renders simple, legible PNG charts for benchmark reports: line
// charts (several series, optional dashed reference curves, optional log axes)
// and grouped bar charts. It uses only the standard library and an embedded
// 5x8 bitmap font, so the output is identical on every machine.
//
// Charts have a white background, a title, a legend box under the title, axes
// with 1/2/5-step ticks labelled compactly (1.5k, 20k, 1.2M, 0.25) and a fixed
// color Palette. Invalid input (no series, mismatched lengths, non-positive
// values on a log axis) is reported as an error naming the series and index.
package plot
