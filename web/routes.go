package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// routes registers every route of the server, in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(middleware.Recover())
	e.Use(secureHeaders)
	e.Use(s.checkHost)
	e.Use(sameOrigin())
	e.Use(s.limitBody)
	e.Use(s.authenticate)
	e.Use(s.csrf)
	s.libraryRoutes()
	s.runRoutes()
	s.linkRoutes()
	s.settingsRoutes()
	for _, op := range apiOps() {
		e.Add(op.method, op.path, func(c echo.Context) error { return op.handler(s, c) })
	}
}

// libraryRoutes are the pages of what runs are made of — datasets,
// conditions and rubrics — and the server's own: assets, health, sign-in.
func (s *Server) libraryRoutes() {
	e := s.echo
	e.GET("/static/*", s.assets.serve)
	e.HEAD("/static/*", s.assets.serve)
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/runs") })
	e.GET("/login", s.loginPage)
	e.POST("/login", s.login)
	e.POST("/logout", s.logout)

	e.GET("/datasets", s.datasetsPage)
	e.POST("/datasets", s.uploadDataset)
	e.GET("/datasets/:id", s.datasetPage)
	e.POST("/datasets/:id/delete", s.deleteDataset)

	e.GET("/conditions", s.conditionsPage)
	e.GET("/conditions/new", s.newConditionPage)
	e.POST("/conditions", s.createCondition)
	e.GET("/conditions/:id/edit", s.editConditionPage)
	e.POST("/conditions/:id", s.updateCondition)
	e.POST("/conditions/:id/delete", s.deleteCondition)

	e.GET("/rubrics", s.rubricsPage)
	e.GET("/rubrics/new", s.newRubricPage)
	e.POST("/rubrics", s.createRubric)
	e.GET("/rubrics/:name", s.rubricPage)
	e.POST("/rubrics/:name", s.updateRubric)
	e.POST("/rubrics/:name/delete", s.deleteRubric)
}

// runRoutes are a run's pages and forms for those signed in.
func (s *Server) runRoutes() {
	e := s.echo
	e.GET("/runs", s.runsPage)
	e.GET("/runs/new", s.newRunPage)
	e.POST("/runs", s.createRun)
	e.POST("/runs/estimate", s.estimateRun)
	e.POST("/runs/import", s.importRun)
	e.GET("/runs/:id", s.runPage)
	e.GET("/runs/:id/progress", s.runProgress)
	e.POST("/runs/:id/cancel", s.cancelRun)
	e.POST("/runs/:id/retry-errors", s.retryErrors)
	e.POST("/runs/:id/audit", s.startAudit)
	e.POST("/runs/:id/rejudge", s.rejudgeForm)
	e.POST("/runs/:id/notes", s.setRunNotes)
	e.POST("/runs/:id/resume", s.resumeRun)
	e.POST("/runs/:id/delete", s.deleteRun)
	e.POST("/runs/:id/reviews", s.reviewForm)
	e.GET("/runs/:id/review/next", s.reviewNext)
	e.POST("/runs/:id/review-links", s.createReviewLinkForm)
	e.POST("/runs/:id/review-links/:token/revoke", s.revokeReviewLinkForm)
	e.GET("/runs/:id/samples", s.samplesPage)
	e.GET("/runs/:id/routing", s.routingPage)
	e.GET("/runs/:id/judges", s.judgesPage)
	e.GET("/runs/:id/samples/:sample", s.samplePage)
	e.GET("/runs/:id/report", s.reportFragment)
	e.POST("/runs/:id/shares", s.createShare)
	e.POST("/runs/:id/shares/:token/revoke", s.revokeShare)
	e.GET("/runs/:id/export.json", s.exportJSON)
	e.GET("/runs/:id/export.csv", s.exportCSV)
	e.GET("/runs/:id/export.html", s.exportHTML)
	e.GET("/compare", s.comparePage)
}

// linkRoutes are the pages a share link (/r/) or a review link (/rv/) opens
// without an account.
func (s *Server) linkRoutes() {
	e := s.echo
	e.GET("/rv/:link", s.reviewLinkHome)
	e.GET("/rv/:link/samples", s.samplesPage)
	e.GET("/rv/:link/samples/:sample", s.samplePage)
	e.POST("/rv/:link/reviews", s.reviewForm)
	e.GET("/rv/:link/review/next", s.reviewNext)
	e.GET("/r/:token", s.sharedReport)
	e.GET("/r/:token/report", s.reportFragment)
	e.GET("/r/:token/routing", s.routingPage)
	e.GET("/r/:token/export.html", s.exportHTML)
	e.GET("/r/:token/samples", s.samplesPage)
	e.GET("/r/:token/samples/:sample", s.samplePage)
}

// settingsRoutes are the settings page and its forms.
func (s *Server) settingsRoutes() {
	e := s.echo
	e.GET("/settings", s.settingsPage)
	e.POST("/settings/prices", s.setPrice)
	e.GET("/settings/prices", s.toSettings) // the address a refused form leaves in the bar
	e.GET("/settings/tokens", s.toSettings)
	e.POST("/settings/prices/delete", s.deletePrice)
	e.POST("/settings/tokens", s.createToken)
	e.POST("/settings/tokens/revoke", s.revokeToken)
}

// limitBody bounds every request body by the upload limit (and a little for
// the other fields), before anything reads a form; twice that for the run
// import, which carries two files.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		limit := s.cfg.MaxUpload + 1<<20
		if r.URL.Path == "/runs/import" || r.URL.Path == "/api/runs/import" {
			limit += s.cfg.MaxUpload
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
		return next(c)
	}
}

// secureHeaders keeps pages from loading anything from elsewhere or being framed.
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if c.Request().TLS != nil {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		return next(c)
	}
}
