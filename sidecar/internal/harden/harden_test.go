package harden

import (
	"reflect"
	"testing"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{
			name: "hardened",
			in:   "Name:\tpalyra-sidecar\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\nCapInh:\t0000000000000000\nCapEff:\t0000000000000000\nVmData:\t 1000 kB\n",
			want: map[string]string{"NoNewPrivs": "1", "Seccomp": "2", "Seccomp_filters": "1", "CapInh": "0000000000000000", "CapEff": "0000000000000000"},
		},
		{
			name: "only known keys, no prefix matches",
			in:   "SeccompX:\t9\nCapEffective:\t1\nNoNewPrivs:\t0\n",
			want: map[string]string{"NoNewPrivs": "0"},
		},
		{name: "empty", in: "", want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseStatus([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseStatus = %v, want %v", got, tt.want)
			}
		})
	}
}
