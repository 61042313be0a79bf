package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/store"
)

// apiDatasets handles GET /api/datasets.
func (s *Server) apiDatasets(c echo.Context) error {
	list, err := s.db.Datasets(c.Request().Context())
	if err != nil {
		return err
	}
	out := []readmodel.DatasetJSON{}
	for i := range list {
		out = append(out, readmodel.NewDatasetJSON(&list[i]))
	}
	return c.JSON(http.StatusOK, out)
}

// apiUploadDataset handles POST /api/datasets (multipart, field "file").
func (s *Server) apiUploadDataset(c echo.Context) error {
	d, created, err := s.importUpload(c)
	if err != nil {
		return err
	}
	out := readmodel.NewDatasetJSON(d)
	out.Created = &created
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, out)
}

// apiDataset handles GET /api/datasets/:id.
func (s *Server) apiDataset(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	d, err := s.db.Dataset(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, readmodel.NewDatasetJSON(d))
}

// apiSamples handles GET /api/datasets/:id/samples?offset=&limit=.
func (s *Server) apiSamples(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	offset, _ := strconv.Atoi(c.QueryParam("offset"))
	limit, _ := strconv.Atoi(c.QueryParam("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	samples, err := s.db.Samples(c.Request().Context(), id, max(offset, 0), limit)
	if err != nil {
		return err
	}
	if samples == nil {
		samples = []store.Sample{}
	}
	return c.JSON(http.StatusOK, samples)
}

// apiConditions handles GET /api/conditions.
func (s *Server) apiConditions(c echo.Context) error {
	list, err := s.db.Conditions(c.Request().Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []assay.Condition{}
	}
	return c.JSON(http.StatusOK, list)
}

// apiCondition handles GET /api/conditions/:id.
func (s *Server) apiCondition(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	cond, err := s.db.Condition(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cond)
}

func decodeCondition(c echo.Context) (*assay.Condition, error) {
	var cond assay.Condition
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cond); err != nil {
		return nil, assay.Errorf(assay.EINVALID, "condition JSON: %v", err)
	}
	return &cond, nil
}

// apiCreateCondition handles POST /api/conditions.
func (s *Server) apiCreateCondition(c echo.Context) error {
	cond, err := decodeCondition(c)
	if err != nil {
		return err
	}
	if err := s.db.CreateCondition(c.Request().Context(), cond); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"id": cond.ID, "condition": cond})
}

// apiUpdateCondition handles PUT /api/conditions/:id.
func (s *Server) apiUpdateCondition(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	cond, err := decodeCondition(c)
	if err != nil {
		return err
	}
	cond.ID = id
	if err := s.db.UpdateCondition(c.Request().Context(), cond); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cond)
}

// apiDeleteCondition handles DELETE /api/conditions/:id.
func (s *Server) apiDeleteCondition(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.db.DeleteCondition(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
