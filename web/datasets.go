package web

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/store"
	"assay/store/ingest"
	"assay/templates"
)

const samplesPerPage = 25

// datasetsPage handles GET /datasets.
func (s *Server) datasetsPage(c echo.Context) error {
	return s.renderDatasets(c, http.StatusOK, templates.UploadForm{})
}

func (s *Server) renderDatasets(c echo.Context, status int, form templates.UploadForm) error {
	list, err := s.db.Datasets(c.Request().Context())
	if err != nil {
		return err
	}
	form.MaxMiB = s.cfg.MaxUpload >> 20
	v := templates.DatasetsView{Page: s.page(c, "Datasets", "datasets"), Form: form}
	for _, d := range list {
		v.Datasets = append(v.Datasets, readmodel.DatasetRow(d))
	}
	for _, k := range assay.Kinds {
		v.Kinds = append(v.Kinds, string(k))
	}
	return render(c, status, templates.Datasets(v))
}

// uploadDataset handles POST /datasets: the upload form.
func (s *Server) uploadDataset(c echo.Context) error {
	d, created, err := s.importUpload(c)
	if err != nil {
		form := templates.UploadForm{
			Name:        c.FormValue("name"),
			Kind:        c.FormValue("kind"),
			QuestionKey: c.FormValue("question_key"),
			AnswerKey:   c.FormValue("answer_key"),
			Error:       uploadMessage(err),
		}
		return s.renderDatasets(c, statusFor(err), form)
	}
	switch ignored := ignoredSettings(c, d); {
	case created:
		msg := fmt.Sprintf("Imported %s as %s.", templates.Count(d.Samples, "sample"), d.Kind)
		if others, err := s.sameBytes(c, d); err != nil {
			return err
		} else if len(others) > 0 {
			msg += " These bytes are also " + strings.Join(others, " and ") + ", read another way; this dataset reads them " +
				reading(d) + ", and each keeps its own runs."
		}
		setFlash(c, "ok", msg)
	case len(ignored) > 0:
		setFlash(c, "warn", fmt.Sprintf("These exact bytes, read the same way, were uploaded before as this dataset; "+
			"what you chose for them was not applied: %s.", strings.Join(ignored, ", ")))
	default:
		setFlash(c, "info", "These exact bytes were uploaded before, read the same way: here is that dataset.")
	}
	return redirect(c, fmt.Sprintf("/datasets/%d", d.ID))
}

// importUpload reads the "file" part of a multipart request, within the size limit, and imports it.
func (s *Server) importUpload(c echo.Context) (*store.Dataset, bool, error) {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxUpload+1<<20)
	fh, err := formFile(c, "file")
	if err != nil {
		return nil, false, formFileError(err, s.cfg.MaxUpload)
	}
	data, err := readUpload(fh, s.cfg.MaxUpload)
	if err != nil {
		return nil, false, err
	}
	opts := ingest.Options{
		Filename:    fh.Filename,
		Kind:        assay.Kind(c.FormValue("kind")),
		QuestionKey: c.FormValue("question_key"),
		AnswerKey:   c.FormValue("answer_key"),
		MaxBytes:    s.cfg.MaxUpload,
	}
	return ingest.Import(r.Context(), s.db, data, opts, c.FormValue("name"))
}

// multipartMemory is how much of a multipart form is held in memory as it
// is read; its files beyond that go to temporary files, which the server
// removes after the request. Holding 32 MB (net/http's default) in a
// buffer that doubled as it grew cost a 44 MB upload 64 MB on top of the
// file read from it.
const multipartMemory = 1 << 20

// formFile reads the request's multipart form, within multipartMemory, and
// returns its file named field.
func formFile(c echo.Context, field string) (*multipart.FileHeader, error) {
	if r := c.Request(); r.MultipartForm == nil {
		if err := r.ParseMultipartForm(multipartMemory); err != nil {
			return nil, err
		}
	}
	return c.FormFile(field)
}

// readUpload reads an uploaded file whole, refusing one over limit bytes.
// The file is read into a buffer of its size: read by io.ReadAll, a 44 MB
// file went through buffers of twice that as it grew.
func readUpload(fh *multipart.FileHeader, limit int64) ([]byte, error) {
	if fh.Size > limit {
		return nil, tooLarge(limit)
	}
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("open upload: %w", err)
	}
	defer f.Close()
	data := make([]byte, fh.Size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("read upload: %w", err)
	}
	return data, nil
}

func formFileError(err error, limit int64) error {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return tooLarge(limit)
	}
	if errors.Is(err, http.ErrMissingFile) {
		return assay.Errorf(assay.EINVALID, "Choose a dataset file to upload.")
	}
	return assay.Errorf(assay.EINVALID, "The upload could not be read: %v", err)
}

func tooLarge(limit int64) error {
	return assay.Errorf(assay.ETOOLARGE, "The file is larger than the upload limit of %d MiB (assay serve --max-upload changes it).", limit>>20)
}

func statusFor(err error) int { return statusOf(assay.ErrorCode(err)) }

func uploadMessage(err error) string {
	if assay.ErrorCode(err) == assay.EINTERNAL {
		return "The dataset could not be stored; nothing was imported."
	}
	msg := assay.ErrorMessage(err)
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg + " Nothing was imported."
}

// deleteDataset handles POST /datasets/:id/delete; with_runs deletes the
// runs that use it too.
func (s *Server) deleteDataset(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := pathID(c)
	if err != nil {
		return err
	}
	d, err := s.db.Dataset(ctx, id)
	if err != nil {
		return err
	}
	runs, err := s.db.DeleteDataset(ctx, id, c.FormValue("with_runs") != "")
	if err != nil {
		if assay.ErrorCode(err) == assay.ECONFLICT {
			setFlash(c, "error", assay.ErrorMessage(err))
			return redirect(c, fmt.Sprintf("/datasets/%d", id))
		}
		return err
	}
	s.log.Info("dataset deleted", "dataset_id", id, "runs", runs, "by", store.Actor(ctx))
	msg := fmt.Sprintf("Deleted dataset “%s”.", d.Name)
	if runs > 0 {
		msg = fmt.Sprintf("Deleted dataset “%s” and its %d runs.", d.Name, runs)
	}
	setFlash(c, "ok", msg)
	return redirect(c, "/datasets")
}

// datasetPage handles GET /datasets/:id.
func (s *Server) datasetPage(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := pathID(c)
	if err != nil {
		return err
	}
	d, err := s.db.Dataset(ctx, id)
	if err != nil {
		return err
	}
	pager := newPager(c.QueryParam("page"), samplesPerPage, d.Samples, fmt.Sprintf("/datasets/%d?page=", d.ID))
	samples, err := s.db.Samples(ctx, d.ID, (pager.Page-1)*pager.PerPage, pager.PerPage)
	if err != nil {
		return err
	}
	v := templates.DatasetView{Page: s.page(c, d.Name, "datasets"), Dataset: readmodel.DatasetRow(*d), Pager: pager}
	if u := userOf(c); u != nil && u.Role == store.RoleOwner {
		n, err := s.db.DatasetRunCount(ctx, d.ID)
		if err != nil {
			return err
		}
		v.CanDelete, v.Runs = true, n
	}
	for _, smp := range samples {
		v.Samples = append(v.Samples, readmodel.SampleRow(smp))
	}
	if v.Boards, err = s.model.Leaderboards(ctx, d.ID); err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Dataset(v))
}

func pathID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("id %q: %w", c.Param("id"), assay.ErrNotFound)
	}
	return id, nil
}

func newPager(param string, perPage, total int, base string) templates.Pager {
	pages := max(1, (total+perPage-1)/perPage)
	page, _ := strconv.Atoi(param)
	page = min(max(page, 1), pages)
	return templates.Pager{
		Page:    page,
		Pages:   pages,
		PerPage: perPage,
		Total:   total,
		BaseURL: base,
	}
}

// sameBytes names the other datasets of d's bytes, each with its reading.
func (s *Server) sameBytes(c echo.Context, d *store.Dataset) ([]string, error) {
	all, err := s.db.Datasets(c.Request().Context())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range all {
		if o.SHA256 == d.SHA256 && o.ID != d.ID {
			out = append(out, fmt.Sprintf("dataset %d %q (%s)", o.ID, o.Name, reading(&o)))
		}
	}
	return out, nil
}

// reading says how a dataset reads its bytes.
func reading(d *store.Dataset) string {
	out := "as " + string(d.Kind)
	if d.QuestionKey != "" {
		out += fmt.Sprintf(", question key %q", d.QuestionKey)
	}
	if d.AnswerKey != "" {
		out += fmt.Sprintf(", answer key %q", d.AnswerKey)
	}
	return out
}

// ignoredSettings names the settings of an upload that differ from those of
// the dataset its bytes already were: they were not applied.
func ignoredSettings(c echo.Context, d *store.Dataset) []string {
	var out []string
	if k := c.FormValue("kind"); k != "" && assay.Kind(k) != d.Kind {
		out = append(out, fmt.Sprintf("kind %s (it is %s)", k, d.Kind))
	}
	for _, f := range []struct{ field, label, have string }{
		{"question_key", "question key", d.QuestionKey}, {"answer_key", "answer key", d.AnswerKey}} {
		if v := strings.TrimSpace(c.FormValue(f.field)); v != "" && v != f.have {
			out = append(out, fmt.Sprintf("%s %q (it is %q)", f.label, v, f.have))
		}
	}
	if n := strings.TrimSpace(c.FormValue("name")); n != "" && n != d.Name {
		out = append(out, fmt.Sprintf("name %q (it is %q)", n, d.Name))
	}
	return out
}
