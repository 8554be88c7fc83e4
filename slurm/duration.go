package slurm

import (
	"errors"
	"fmt"
	"strings"
)

// Special durations.
const (
	// Unlimited is the duration of "UNLIMITED" or "INFINITE": no limit.
	Unlimited int64 = -1
	// Unknown is the duration of an empty value, "Unknown", "None" or
	// "Partition_Limit" (sacct's Timelimit of a job that took its
	// partition's limit): not known here.
	Unknown int64 = -2
)

// MaxSeconds is the largest duration Duration accepts, in seconds: 10^15,
// the most any time may be in xce (cluster.MaxTime).
const MaxSeconds = 1_000_000_000_000_000

// MaxValue is the longest value, in bytes, the parsers of this package
// read; a longer one is an error (bounded memory and time whatever the
// input).
const MaxValue = 4096

// Duration parses a Slurm time string into seconds, as slurm.conf(5)
// (MaxTime, DefaultTime, PriorityMaxAge, PriorityDecayHalfLife), sbatch(1)
// --time and sacct(1) (Elapsed, Timelimit) write it:
//
//	"MM"          minutes
//	"MM:SS"       minutes and seconds
//	"HH:MM:SS"    hours, minutes and seconds
//	"D-HH"        days and hours
//	"D-HH:MM"     days, hours and minutes
//	"D-HH:MM:SS"  days, hours, minutes and seconds
//
// (sbatch(1), --time: "Acceptable time formats include "minutes",
// "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes" and "days-hours:minutes:seconds"".) A value may
// carry a fraction of a second, which is dropped ("00:00:01.500" is 1 s),
// as sacct prints some elapsed times. "UNLIMITED" and "INFINITE" (any
// case) are Unlimited; "", "Unknown", "None" and "Partition_Limit" are
// Unknown. Each number is a non-negative decimal integer; the total is
// at most MaxSeconds. The error says what is wrong, quoting the value.
func Duration(s string) (int64, error) {
	v := strings.TrimSpace(s)
	switch strings.ToLower(v) {
	case "unlimited", "infinite":
		return Unlimited, nil
	case "", "unknown", "none", "partition_limit":
		return Unknown, nil
	}
	if len(v) > 64 {
		return 0, fmt.Errorf("time %s: too long", Quote(v))
	}
	if i := strings.IndexByte(v, '.'); i >= 0 {
		// Fraction of a second (sacct prints "00:00:01.500" for some
		// steps): the digits after the point are dropped.
		if !strings.Contains(v[:i], ":") || !allDigits(v[i+1:]) || v[i+1:] == "" {
			return 0, fmt.Errorf("time %s: a fraction of a second follows MM:SS or HH:MM:SS", Quote(v))
		}
		v = v[:i]
	}
	var days int64
	hasDays := false
	if i := strings.IndexByte(v, '-'); i >= 0 {
		d, err := uintField(v[:i])
		if err != nil {
			return 0, fmt.Errorf("time %s: days: %w", Quote(s), err)
		}
		days, hasDays, v = d, true, v[i+1:]
	}
	parts := strings.Split(v, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("time %s: more than three ':'-separated fields", Quote(s))
	}
	nums := make([]int64, len(parts))
	for k, p := range parts {
		n, err := uintField(p)
		if err != nil {
			return 0, fmt.Errorf("time %s: %w", Quote(s), err)
		}
		nums[k] = n
	}
	var h, m, sec int64
	switch {
	case hasDays && len(nums) == 1: // D-HH
		h = nums[0]
	case hasDays && len(nums) == 2: // D-HH:MM
		h, m = nums[0], nums[1]
	case len(nums) == 3: // [D-]HH:MM:SS
		h, m, sec = nums[0], nums[1], nums[2]
	case len(nums) == 2: // MM:SS
		m, sec = nums[0], nums[1]
	default: // MM
		m = nums[0]
	}
	// Each term at most 10^15 (uintField); the sum is checked in steps
	// that cannot overflow int64.
	total := sec
	for _, t := range []struct{ n, unit int64 }{{m, 60}, {h, 3600}, {days, 86400}} {
		if t.n > MaxSeconds/t.unit {
			return 0, fmt.Errorf("time %s: more than 10^15 seconds", Quote(s))
		}
		total += t.n * t.unit
		if total > MaxSeconds {
			return 0, fmt.Errorf("time %s: more than 10^15 seconds", Quote(s))
		}
	}
	return total, nil
}

// errNotNumber is the error of a field that is not a decimal number.
var errNotNumber = errors.New("not a non-negative decimal number")

// uintField parses a non-empty string of at most 16 decimal digits.
func uintField(s string) (int64, error) {
	if s == "" || !allDigits(s) {
		return 0, fmt.Errorf("%s: %w", Quote(s), errNotNumber)
	}
	if len(s) > 16 {
		return 0, fmt.Errorf("%s: more than 16 digits", Quote(s))
	}
	var n int64
	for i := 0; i < len(s); i++ {
		n = n*10 + int64(s[i]-'0')
	}
	return n, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatDuration writes seconds as sacct(1) does: "HH:MM:SS", or
// "D-HH:MM:SS" from one day up; Unlimited is "UNLIMITED", a negative
// value otherwise "Unknown".
func FormatDuration(secs int64) string {
	switch {
	case secs == Unlimited:
		return "UNLIMITED"
	case secs < 0:
		return "Unknown"
	}
	d, r := secs/86400, secs%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", r/3600, r%3600/60, r%60)
	if d > 0 {
		return fmt.Sprintf("%d-%s", d, hms)
	}
	return hms
}

// Quote quotes s for an error message, cut to 40 bytes followed by
// "..." when longer, so that errors stay short whatever the input.
func Quote(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q...", s[:40])
	}
	return fmt.Sprintf("%q", s)
}
