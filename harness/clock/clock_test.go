package clock

import (
	"encoding/json"
	"testing"
)

// Clocks read and write the names the flags, campaign.json and
// results.jsonl use, and refuse others with the flag's words.
func TestClockNamesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Clock
		text string
	}{{"", Real, "real"}, {"real", Real, "real"}, {"virtual", Virtual, "virtual"}} {
		got, err := Parse(c.in)
		if err != nil || got != c.want || got.String() != c.text {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.text)
		}
	}
	if _, err := Parse("sundial"); err == nil {
		t.Error("Parse(sundial) took it")
	}
	for _, c := range []struct {
		in, text string
		n        int
	}{{"", "real", 1}, {"real", "real", 1}, {"virtual", "virtual", 1}, {"both", "both", 2}} {
		ch, err := ParseChoice(c.in)
		if err != nil || ch.String() != c.text || len(ch) != c.n {
			t.Errorf("ParseChoice(%q) = %v, %v; want %s", c.in, ch, err, c.text)
		}
	}
	if _, err := ParseChoice("sundial"); err == nil || err.Error() != `unknown clock "sundial": use --clock real, virtual or both` {
		t.Errorf("ParseChoice(sundial): %v", err)
	}
	if !Both.Has(Virtual) || Both.Only(Virtual) || !(Choice{Virtual}).Only(Virtual) {
		t.Error("Has/Only")
	}
}

// A record's clock is left out of its JSON in real time and written
// "virtual" in virtual time, as results.jsonl always had it.
func TestClockInRecordsAsBefore(t *testing.T) {
	type rec struct {
		Clock Clock `json:"clock,omitempty"`
	}
	for _, c := range []struct {
		c    Clock
		json string
	}{{Real, `{}`}, {Virtual, `{"clock":"virtual"}`}} {
		b, err := json.Marshal(rec{c.c})
		if err != nil || string(b) != c.json {
			t.Errorf("%v: %s, %v; want %s", c.c, b, err, c.json)
		}
		var back rec
		if err := json.Unmarshal(b, &back); err != nil || back.Clock != c.c {
			t.Errorf("%s read back %v, %v", b, back.Clock, err)
		}
	}
	var back rec
	if err := json.Unmarshal([]byte(`{"clock":"sundial"}`), &back); err == nil {
		t.Error("a record with an unknown clock read")
	}
	type id struct {
		Clock Choice `json:"clock"`
	}
	b, _ := json.Marshal(id{Both})
	if string(b) != `{"clock":"both"}` {
		t.Errorf("campaign clock: %s", b)
	}
	var i id
	if err := json.Unmarshal([]byte(`{"clock":"real"}`), &i); err != nil || i.Clock.String() != "real" {
		t.Errorf("campaign clock read back %v, %v", i.Clock, err)
	}
}
