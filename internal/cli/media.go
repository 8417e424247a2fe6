package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// mediaCmd is `sendonce media`: the account's image library.
func (a *App) mediaCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "media", Short: "Upload, list and delete the images of the media library"}
	var name string
	upload := &cobra.Command{
		Use:   "upload FILE",
		Short: "Upload an image (PNG, JPEG, GIF or WebP) and print its public address",
		Example: `  sendonce media upload logo.png
  sendonce media upload photo.jpg --name "Team photo" --json`,
		Args: args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			body, err := os.ReadFile(argv[0])
			if err != nil {
				return Usage(err)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			n := name
			if n == "" {
				n = filepath.Base(argv[0])
			}
			// The service tells the format from the bytes.
			resp, err := c.UploadMediaWithBodyWithResponse(cmd.Context(), &client.UploadMediaParams{Name: &n},
				"application/octet-stream", bytes.NewReader(body))
			if err := client.Check(resp, err); err != nil {
				return err
			}
			m, verb := resp.JSON201, "uploaded"
			if m == nil {
				m, verb = resp.JSON200, "already in the library"
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), m)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: image %d, %s, %d×%d, %d bytes\n%s\n", verb, m.Id, m.ContentType, m.Width, m.Height, m.Size, m.Url)
			return nil
		},
	}
	upload.Flags().StringVar(&name, "name", "", "the image's display name (default: the file's name)")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the library's images, newest first",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			all := []client.Media{}
			for m, err := range c.Media(cmd.Context(), client.ListMediaParams{}) {
				if err != nil {
					return err
				}
				all = append(all, m)
			}
			return printList(a, cmd.OutOrStdout(), all, []string{"ID", "NAME", "SIZE", "BYTES", "URL"},
				func(m client.Media) []string {
					return []string{itoa(m.Id), m.Name, fmt.Sprintf("%d×%d", m.Width, m.Height), itoa(int64(m.Size)), m.Url}
				})
		},
	}

	remove := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete an image (refused while a campaign past draft shows it)",
		Args:  args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			resp, err := c.DeleteMediaWithResponse(ctx, id)
			return answer{map[string]any{"id": id, "deleted": true}, say("deleted image %d", id)}, client.Check(resp, err)
		}),
	}
	cmd.AddCommand(upload, list, remove)
	return cmd
}
