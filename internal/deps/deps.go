package deps

import (
	_ "github.com/adrg/strutil"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/tidwall/gjson"
	_ "github.com/tidwall/sjson"
	_ "go.etcd.io/bbolt"
)
