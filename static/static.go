// Package static embeds the CSS and JavaScript that every page uses, so pages need no network.
package static

import "embed"

// FS holds the embedded assets, served under /static/.
//
//go:embed *.js *.css
var FS embed.FS
