package resreq

// Kind is the type of a host attribute as a select expression sees it.
type Kind uint8

const (
	// KindNumeric: a number (slots, mem in MB, ncpus, any consumable).
	KindNumeric Kind = iota + 1
	// KindString: a string attribute (type, model, hname); its value in a
	// host's vector is the number Schema.StringValue gives for the string.
	KindString
	// KindBool: a boolean resource (a host tag such as gpu or ssd); 1 when
	// the host has it, NaN when it does not.
	KindBool
)

// Schema resolves names in a select or order expression to columns of a
// host's flat value vector ([]float64, one entry per column; NaN marks an
// attribute the host does not define). The cluster package implements it.
type Schema interface {
	// Lookup returns the column and kind of attribute name, or ok=false
	// when no host of the cluster defines it.
	Lookup(name string) (col int, kind Kind, ok bool)
	// StringValue returns the number that string attribute columns hold for
	// s. A string that no host holds gets a value that no column holds.
	StringValue(s string) float64
}
