/* The Khronos validation layer as a test oracle: with PPOCR_VK_VALIDATE=1 (or
 * gpu_options.validate) every warning or error it reports is printed to stderr as one line and
 * counted, and a process that saw any exits with status 86 instead of its own.
 *
 * Threads: any; the count is an atomic. */
#ifndef PPOCR_GPU_VALIDATION_H
#define PPOCR_GPU_VALIDATION_H

#include <stdbool.h>

#include <vulkan/vulkan.h>

/* Validation messages seen so far in this process. */
unsigned gpu_validation_message_count(void);

/* For device.c, which makes the instance. */
bool gpu_validation_layer_present(void);
/* Extends an instance create-info chain with sync validation and a messenger that counts. */
void gpu_validation_instance_chain(VkInstanceCreateInfo *ci, VkValidationFeaturesEXT *features,
                                   VkDebugUtilsMessengerCreateInfoEXT *messenger);
int gpu_validation_messenger_create(VkInstance instance, VkDebugUtilsMessengerEXT *out);
void gpu_validation_messenger_destroy(VkInstance instance, VkDebugUtilsMessengerEXT messenger);

#endif
